"""The provider adapter protocol and the values that cross it.

An adapter speaks one upstream dialect. It takes an OpenAI-shaped chat-completions body (already
reduced to what the route accepts, `model` set to the upstream name) and gives back OpenAI-shaped
values: a `chat.completion` dict, or an async iterator of `chat.completion.chunk` dicts. Errors are
`providers.errors.UpstreamError` subclasses, never httpx exceptions.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

# How an OpenAI-compatible route switches a hybrid model's thinking, as its catalog entry declares:
# `reasoning_effort` ("none" turns it off: Groq, Gemini, Fireworks, DeepInfra), `chat_template_kwargs`
# (`{"enable_thinking": ...}`: vLLM, SGLang and other servers of Qwen3's template), `reasoning_enabled`
# (`{"reasoning": {"enabled": ...}}`: Together's hybrid models), or `none`: nothing is sent, and the model runs
# its default. Non-standard fields go only where declared: a strict server refuses what it does not know.
THINKING_SWITCHES = ("reasoning_effort", "chat_template_kwargs", "reasoning_enabled", "none")
NO_THINKING_SWITCH = "none"


@dataclass(frozen=True, slots=True)
class UpstreamTarget:
    """Where and how to call one route."""

    provider: str  # provider slug, e.g. "groq", "simulated"
    dialect: str  # "openai" or "anthropic"
    base_url: str  # e.g. "https://api.groq.com/openai/v1" (no trailing slash)
    upstream_model: str
    api_key: str | None = None
    thinking_switch: str = NO_THINKING_SWITCH  # one of THINKING_SWITCHES; a dialect with its own ignores it


@dataclass(frozen=True, slots=True)
class CallOptions:
    """Per-attempt limits. Times in seconds; `first_token_timeout` bounds the wait for the first byte
    of a non-streamed answer or the first content/reasoning/tool delta of a stream; `idle_timeout`
    bounds silence between stream events after that; `deadline` is an absolute `time.monotonic()`."""

    first_token_timeout: float
    idle_timeout: float
    deadline: float
    thinking: bool | None = None  # True on, False off, None leave to the model


@dataclass(frozen=True, slots=True)
class ThinkingTraits:
    """How a dialect serves a model that can switch thinking on and off: whether the model thinks when
    it is sent no switch, the smallest max_tokens with which it can think (0 when any will do), and whether
    the dialect has a switch of its own (Anthropic's `thinking`) rather than the one a route declares."""

    on_by_default: bool
    min_max_tokens: int = 0
    native_switch: bool = False


class ProviderAdapter(Protocol):
    dialect: str
    thinking: ThinkingTraits

    async def complete(
        self, client: httpx.AsyncClient, target: UpstreamTarget, body: dict[str, Any], options: CallOptions
    ) -> dict[str, Any]:
        """Return an OpenAI `chat.completion` dict; raise UpstreamError on any failure."""
        ...

    def stream(
        self, client: httpx.AsyncClient, target: UpstreamTarget, body: dict[str, Any], options: CallOptions
    ) -> AsyncIterator[dict[str, Any]]:
        """Yield OpenAI `chat.completion.chunk` dicts (the last one may carry `usage`); raise
        UpstreamError on failure. Closing the iterator cancels the upstream request."""
        ...

    def not_forwarded(self, body: dict[str, Any], target: UpstreamTarget, thinking: bool | None) -> frozenset[str]:
        """Return the fields of `body` this adapter does not send to the target (neither as written nor
        mapped) when called with this thinking switch: what the request reports in `dropped_params`."""
        ...
