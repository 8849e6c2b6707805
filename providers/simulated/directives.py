"""Test directives (`[sim:...]`) read from the last user message's text."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

_DIRECTIVE_RE = re.compile(r"\[sim:([a-z_]+)(?:=([^\]@]*))?(?:@([^\]]*))?\]")


@dataclass(frozen=True, slots=True)
class Directives:
    """What a request asked the simulated upstream to do besides answering normally."""

    fail: int | None = None  # answer this HTTP status with the dialect's error body
    stall_ms: int = 0  # real milliseconds before the first byte of the response
    fail_at_chunk: int | None = None  # drop the stream after this many content chunks
    malformed: bool = False
    tokens: int | None = None  # answer length
    tag: str = "default"  # /stats bucket
    refuse: bool = False
    tool_call: str | None = None  # "" for the first tool, else a tool name
    json_none: bool = False  # answer prose even when JSON was asked for
    idle_ms: int = 0  # real milliseconds of silence mid-stream


NO_DIRECTIVES = Directives()


def _serves(models: str | None, model: str) -> bool:
    if models is None:
        return True
    base = model.split(":", 1)[0]
    return any(m.strip() in (model, base) for m in models.split(","))


def _int(value: str | None, default: int = 0) -> int:
    try:
        return int((value or "").strip())
    except ValueError:
        return default


def parse_directives(text: str, model: str) -> Directives:
    """Return the directives in text that apply to `model`; unknown or malformed ones are ignored.

    Any directive may be narrowed with `@model[,model...]`; it then applies only when serving one of
    those models (matched by full name or by the name without its ":variant")."""
    if "[sim:" not in text:
        return NO_DIRECTIVES
    found: dict[str, object] = {}
    for name, value, models in _DIRECTIVE_RE.findall(text):
        if not _serves(models or None, model):
            continue
        match name:
            case "fail":
                found["fail"] = _int(value, 500) or 500
            case "stall_ms":
                found["stall_ms"] = max(_int(value), 0)
            case "fail_at_chunk":
                found["fail_at_chunk"] = max(_int(value), 0)
            case "malformed":
                found["malformed"] = True
            case "tokens":
                found["tokens"] = max(_int(value, 1), 1)
            case "tag":
                found["tag"] = value.strip() or "default"
            case "refuse":
                found["refuse"] = True
            case "tool_call":
                found["tool_call"] = (value or "").strip()
            case "json":
                found["json_none"] = value.strip() == "none"
            case "idle_ms":
                found["idle_ms"] = max(_int(value), 0)
    return replace(NO_DIRECTIVES, **found) if found else NO_DIRECTIVES
