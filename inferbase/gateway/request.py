"""The parsed chat-completions request: the value the API hands the gateway."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from routing.decision import RoutingOverrides


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """A validated chat-completions request."""

    model: str
    messages: tuple[dict[str, Any], ...]
    stream: bool
    include_usage: bool
    max_tokens: int | None
    extended_thinking: bool | None
    routing: RoutingOverrides
    response_format_type: str | None
    json_schema: dict[str, Any] | None
    has_tools: bool
    has_images: bool
    tool_loop: bool
    has_history: bool
    forward: dict[str, Any]  # OpenAI-shaped body for the upstream, without model/stream/stream_options/n
    dropped_params: tuple[str, ...]
    n: int = 1  # choices asked for
