"""Deterministic text for the simulated upstream: seeds, tokens, filler answers, JSON documents."""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Mapping
from typing import Any

import orjson

# Every character lands in exactly one token, so "".join(tokenize(t)) == t.
_TOKEN_RE = re.compile(r"\s*(?:\w+|[^\w\s])|\s+\Z")
_COUNT_RE = re.compile(r"\w+|[^\w\s]")

_ANSWER_WORDS = (
    "the model considers your question and answers with plain simulated words that carry no "
    "meaning beyond their shape while a gateway measures latency tokens routing decisions cost "
    "and fallbacks across providers so tests remain stable reproducible fast and honest about "
    "being synthetic output from a deterministic generator seeded by the request"
).split()
_REASONING_WORDS = (
    "first consider what is asked then weigh the options check each assumption compare two "
    "approaches note the constraints recall the relevant facts estimate the effort verify the "
    "steps and decide on a short answer before writing it down carefully"
).split()


def request_seed(model: str, messages: Any) -> int:
    """Return a stable 64-bit seed for (model, messages): the same request gets the same answer."""
    digest = hashlib.blake2b(orjson.dumps([model, messages]), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def tokenize(text: str) -> list[str]:
    """Split text into approximate tokens (words and punctuation with their leading space)."""
    return _TOKEN_RE.findall(text)


def count_tokens(text: str) -> int:
    """Return the approximate token count of text (words plus punctuation marks)."""
    return len(_COUNT_RE.findall(text))


def label(model: str) -> str:
    """Return the visible prefix every simulated answer starts with."""
    return f"[simulated {model}] "


def filler_tokens(model: str, seed: int, n: int) -> list[str]:
    """Return exactly max(n, 1) answer tokens: the label, then seeded words ending with a full stop."""
    rng = random.Random(seed)
    words = rng.choices(_ANSWER_WORDS, k=max(n - 1, 0))
    if not words:
        return [label(model).rstrip()]
    words[0] = words[0].capitalize()
    words[-1] += "."
    return [label(model), words[0], *(" " + w for w in words[1:])]


def reasoning_tokens(seed: int, n: int) -> list[str]:
    """Return exactly n seeded reasoning tokens."""
    if n <= 0:
        return []
    rng = random.Random(seed ^ 0x5EED)
    words = rng.choices(_REASONING_WORDS, k=n)
    words[0] = words[0].capitalize()
    return [words[0], *(" " + w for w in words[1:])]


def refusal_tokens(model: str) -> list[str]:
    """Return the short refusal a simulated model gives."""
    return tokenize(label(model) + "I can't help with that.")


def json_document(schema: Mapping[str, Any] | None, model: str, seed: int) -> Any:
    """Return a small JSON value: the schema's required properties filled, or a generic object."""
    rng = random.Random(seed ^ 0x150)
    if not schema:
        words = " ".join(rng.choices(_ANSWER_WORDS, k=8))
        return {"simulated": model, "answer": words}
    state = {"labelled": False}
    return _value_for(schema, model, rng, state, depth=0)


def _value_for(schema: Mapping[str, Any], model: str, rng: random.Random, state: dict, depth: int) -> Any:
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return _value_for(schema[key][0], model, rng, state, depth)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    if kind == "object":
        if depth > 6:
            return {}
        props = schema.get("properties") or {}
        return {
            name: _value_for(props.get(name) or {}, model, rng, state, depth + 1)
            for name in schema.get("required") or ()
        }
    if kind == "array":
        items = schema.get("items")
        count = max(int(schema.get("minItems", 1)), 1)
        if not isinstance(items, Mapping) or depth > 6:
            return []
        return [_value_for(items, model, rng, state, depth + 1) for _ in range(count)]
    if kind == "integer":
        return rng.randint(int(schema.get("minimum", 1)), max(int(schema.get("minimum", 1)), 100))
    if kind == "number":
        return round(rng.uniform(0, 100), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    text = " ".join(rng.choices(_ANSWER_WORDS, k=3))
    # Label the first free-text value, so a structured answer is still visibly simulated.
    if not state["labelled"] and not schema.get("format") and not schema.get("pattern"):
        state["labelled"] = True
        text = label(model) + text
    return text


def content_text(content: Any) -> str:
    """Return the text of a message content: a string, or the `text` of its text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p["text"] for p in content if isinstance(p, dict) and p.get("type") == "text" and "text" in p
        )
    return ""
