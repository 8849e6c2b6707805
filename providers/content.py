"""OpenAI message content: a string, or a list of parts of which the `text` ones carry its text; and the JSON
values written in such text."""

from __future__ import annotations

import json
from typing import Any

_DECODER = json.JSONDecoder()


def content_text(content: Any) -> str:
    """Return the text of a message's content: the string, or its text parts' text joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content
                         if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str))
    return ""


def json_value_at(text: str, start: int) -> tuple[Any, int] | None:
    """Return the JSON value that begins at text[start] and the index just past it, or None when none does."""
    try:
        return _DECODER.raw_decode(text, start)
    except ValueError:
        return None
