"""Deterministic text for the simulated upstream: seeds, tokens, filler answers, JSON documents."""

from __future__ import annotations

import hashlib
import math
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from ..content import json_value_at

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
    """Return a small, plausible JSON value valid against schema: the required properties filled, numbers
    small and within their bounds, enums and formats respected; a generic object without a schema."""
    rng = random.Random(seed ^ 0x150)
    if not schema:
        words = " ".join(rng.choices(_ANSWER_WORDS, k=8))
        return {"simulated": model, "answer": words}
    state = {"labelled": False}
    return _value_for(schema, _Root(schema, model, rng, state), depth=0)


@dataclass(frozen=True, slots=True)
class _Root:
    schema: Mapping[str, Any]  # for "$ref": "#/$defs/..." (Pydantic's nested models)
    model: str
    rng: random.Random
    state: dict[str, bool]


_FORMATS = {
    "date": "2026-03-14",
    "date-time": "2026-03-14T09:30:00Z",
    "time": "09:30:00",
    "email": "alex@example.com",
    "uri": "https://example.com/simulated",
    "url": "https://example.com/simulated",
    "uuid": "0f8fad5b-d9cb-469f-a165-70867728950e",
    "ipv4": "192.0.2.10",
    "hostname": "example.com",
}


def _resolve(schema: Mapping[str, Any], root: _Root) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return schema
    node: Any = root.schema
    for part in ref[2:].split("/"):
        node = node.get(part) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else {}


def _number_bounds(schema: Mapping[str, Any], integer: bool) -> tuple[float, float]:
    """Return the inclusive range a number may take: minimum/maximum, exclusive bounds in either draft's form
    (2020-12's numbers, draft 4's booleans beside minimum/maximum), 1 to 100 when unbounded; whole numbers
    inside the bounds for an integer."""
    step = 1 if integer else 0.01
    low, high = _bound(schema, "minimum", "exclusiveMinimum", step), _bound(schema, "maximum", "exclusiveMaximum", -step)
    if integer:
        low = None if low is None else math.ceil(low)
        high = None if high is None else math.floor(high)
    if low is None and high is None:
        low, high = 1, 100
    elif low is None:
        low = min(1, high)
    elif high is None:
        high = max(low, 100) if low < 100 else low + 100
    return low, max(low, high)


def _bound(schema: Mapping[str, Any], inclusive: str, exclusive: str, step: float) -> float | None:
    bound = _number(schema.get(inclusive))
    other = schema.get(exclusive)
    if other is True and bound is not None:  # draft 4: the bound itself is excluded
        return bound + step
    other = _number(other)
    if other is None:
        return bound
    other += step
    if bound is None:
        return other
    return max(bound, other) if step > 0 else min(bound, other)


def _number(value: Any) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _number_in(schema: Mapping[str, Any], rng: random.Random, integer: bool) -> int | float:
    """Return a small number within the schema's bounds, a multiple of its multipleOf when it has one."""
    low, high = _number_bounds(schema, integer)
    multiple = _number(schema.get("multipleOf"))
    if multiple and multiple > 0:
        first, last = math.ceil(low / multiple), math.floor(high / multiple)
        # No multiple in the small default range: the first one above the lower bound.
        value = rng.randint(first, last) * multiple if first <= last else first * multiple
        return int(value) if integer else round(value, 10)
    if integer:
        return rng.randint(int(low), int(high))
    return min(max(round(rng.uniform(low, high), 2), low), high)


def _value_for(schema: Mapping[str, Any], root: _Root, depth: int) -> Any:
    schema = _resolve(schema, root)
    rng = root.rng
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        options = [o for o in schema.get(key) or () if isinstance(o, Mapping) and o.get("type") != "null"]
        if options:
            return _value_for(options[0], root, depth)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged.update(_resolve(part, root))
        return _value_for(merged, root, depth)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    if kind == "object":
        if depth > 6:
            return {}
        props = schema.get("properties") or {}
        return {name: _value_for(props.get(name) or {}, root, depth + 1) for name in schema.get("required") or ()}
    if kind == "array":
        items = schema.get("items")
        low = int(schema.get("minItems", 1))
        high = max(low, min(int(schema.get("maxItems", 3)), 3))
        if not isinstance(items, Mapping) or depth > 6:
            return []
        return [_value_for(items, root, depth + 1) for _ in range(rng.randint(max(low, 1) if high else 0, high))]
    if kind in ("integer", "number"):
        return _number_in(schema, rng, integer=kind == "integer")
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    fmt = schema.get("format")
    if fmt in _FORMATS:
        return _FORMATS[fmt]
    words = rng.choices(_ANSWER_WORDS, k=3)
    value = " ".join(words)
    # Label the first free-text value, so a structured answer is still visibly simulated.
    if not root.state["labelled"] and not fmt and not schema.get("pattern"):
        root.state["labelled"] = True
        value = label(root.model) + value
    min_length = int(schema.get("minLength", 0))
    if len(value) < min_length:
        value = (value + " ") * (min_length // max(len(value), 1) + 1)
    if "maxLength" in schema:
        value = value[: int(schema["maxLength"])]
    return value.strip() if len(value.strip()) >= min_length else value


def _schema_of_example(example: Any) -> dict[str, Any]:
    if isinstance(example, dict):
        return {"type": "object", "properties": {k: _schema_of_example(v) for k, v in example.items()},
                "required": list(example)}
    if isinstance(example, list):
        return {"type": "array", "items": _schema_of_example(example[0]) if example else {}, "minItems": 1}
    if isinstance(example, bool):
        return {"type": "boolean"}
    if isinstance(example, int):
        return {"type": "integer"}
    if isinstance(example, float):
        return {"type": "number"}
    if example is None:
        return {"type": "null"}
    return {"type": "string"}


def _is_schema(value: Mapping[str, Any]) -> bool:
    return "properties" in value or "$schema" in value or value.get("type") == "object"


def shape_in(prompt: str) -> Mapping[str, Any] | None:
    """Return the shape a JSON-mode prompt asks for: a JSON Schema it includes, or the schema of an
    example object it includes (as instructor and LangChain's json mode write them); None otherwise."""
    found: list[Any] = []
    at = prompt.find("{")
    while at >= 0 and len(found) < 8:
        parsed = json_value_at(prompt, at)
        if parsed is None:
            at = prompt.find("{", at + 1)
            continue
        value, end = parsed
        if isinstance(value, dict) and value:
            found.append(value)
        at = prompt.find("{", end)
    for value in found:
        if _is_schema(value):
            return value
    return _schema_of_example(found[-1]) if found else None


