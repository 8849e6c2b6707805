"""Structured-output repair: take the JSON document out of fences or commentary; never rewrite it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

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


def _balanced_from(text: str, start: int) -> str | None:
    opener = text[start]
    closer = "}" if opener == "{" else "]"
    depth = 0
    in_string = False
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == opener:
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return None


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
            candidate = _balanced_from(content, i)
            if candidate is not None and _parses(candidate):
                return Extraction(candidate, "embedded")
    return Extraction(None, None)


def schema_errors(document: str, schema: dict[str, Any]) -> list[str]:
    """Return the document's violations of the JSON schema (empty when it validates)."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema)
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}" for e in validator.iter_errors(json.loads(document))][:5]
