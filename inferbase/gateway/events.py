"""The stream's framing: server-sent events, and the Inferbase events beside OpenAI's chunks."""

from __future__ import annotations

from typing import Any

import orjson

from .errors import ApiError
from .exchange import Exchange

SSE_DONE = b"data: [DONE]\n\n"
SSE_KEEPALIVE = b": processing\n\n"
# The Inferbase events carry one choice with an empty delta, so client loops that read
# `chunk.choices[0].delta` (OpenAI's documented loop, the SDK helpers) pass over them unharmed.
NO_DELTA_CHOICES = [{"index": 0, "delta": {}, "finish_reason": None}]


def sse(data: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(data) + b"\n\n"


def error_event(error: ApiError) -> bytes:
    """Return the event a stream ends with when it fails after it has started: the error envelope's body."""
    return sse({"object": "error", **error.envelope()})


def routing_event(ex: Exchange) -> dict[str, Any]:
    """Return the stream's routing event: the routing object, shaped as a chunk with an empty delta."""
    assert ex.routed is not None
    return {"id": ex.request_id, "object": "routing", "created": int(ex.created), **ex.routed.routing,
            "choices": NO_DELTA_CHOICES}
