"""Structured-output repair: take the JSON document out of fences or commentary; never rewrite it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from providers.content import json_value_at

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Extraction:
    document: str | None  # the JSON text as the model wrote it, or None when there is none
    method: str | None  # None (already a document), "code_fence" or "embedded"


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def json_extract(content: str) -> Extraction:
    """Return the JSON document in an answer: as is, from a code fence, or embedded in commentary."""
    stripped = content.strip()
    if _parses(stripped) and stripped[:1] in ("{", "["):
        return Extraction(stripped, None)
    for match in _FENCE.finditer(content):
        candidate = match.group(1).strip()
        if _parses(candidate):
            return Extraction(candidate, "code_fence")
    for i, ch in enumerate(content):
        if ch in "{[":
            found = json_value_at(content, i)
            if found is not None:
                return Extraction(content[i : found[1]], "embedded")
    return Extraction(None, None)


def schema_errors(document: str, schema: dict[str, Any]) -> list[str]:
    """Return the document's violations of the JSON schema (empty when it validates)."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema)
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}" for e in validator.iter_errors(json.loads(document))][:5]
