"""The Anthropic adapter's HTTP side: POST /messages, streamed or not, within the attempt's limits."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

import httpx
import orjson

from ..base import CallOptions, ThinkingTraits, UpstreamTarget
from ..errors import UpstreamMalformed
from ..transport import drain, endpoint, open_stream, post, remaining, timed_events
from .request import ANTHROPIC_VERSION, MIN_THINKING_MAX_TOKENS, not_forwarded, to_anthropic_request
from .response import carries_token, from_anthropic_response, translate_stream


def _headers(target: UpstreamTarget) -> dict[str, str]:
    headers = {
        "content-type": "application/json",
        "accept": "application/json",
        "anthropic-version": ANTHROPIC_VERSION,
    }
    if target.api_key:
        headers["x-api-key"] = target.api_key
    return headers


class AnthropicAdapter:
    """ProviderAdapter for the Anthropic Messages API (`POST {base_url}/messages`)."""

    dialect = "anthropic"
    # Claude thinks only when the request enables it, and only with room for the minimum budget.
    thinking = ThinkingTraits(on_by_default=False, min_max_tokens=MIN_THINKING_MAX_TOKENS, native_switch=True)

    def not_forwarded(self, body: dict[str, Any], target: UpstreamTarget, thinking: bool | None) -> frozenset[str]:
        """Return the OpenAI fields the Messages request will not carry (see request.not_forwarded)."""
        return not_forwarded(body, thinking)

    def _payload(
        self, target: UpstreamTarget, body: dict[str, Any], options: CallOptions, stream: bool
    ) -> bytes:
        payload = to_anthropic_request(body, options)
        payload["model"] = target.upstream_model
        payload["stream"] = stream
        return orjson.dumps(payload)

    async def complete(
        self, client: httpx.AsyncClient, target: UpstreamTarget, body: dict[str, Any], options: CallOptions
    ) -> dict[str, Any]:
        """Return an OpenAI `chat.completion`; raise UpstreamError (never httpx errors) on any failure."""
        content = self._payload(target, body, options, stream=False)
        budget = min(options.first_token_timeout, remaining(options.deadline))
        response = await post(client, endpoint(target.base_url, "/messages"), content=content, headers=_headers(target),
                              budget=budget)
        try:
            data = orjson.loads(response.content)
        except orjson.JSONDecodeError as exc:
            raise UpstreamMalformed("upstream answered with a body that is not JSON") from exc
        if not isinstance(data, dict) or data.get("type") != "message":
            raise UpstreamMalformed("upstream answer is not a message")
        return from_anthropic_response(data, model=target.upstream_model)

    async def stream(
        self, client: httpx.AsyncClient, target: UpstreamTarget, body: dict[str, Any], options: CallOptions
    ) -> AsyncIterator[dict[str, Any]]:
        """Yield OpenAI chunks; raise FirstTokenTimeout, UpstreamTimeout, UpstreamError subclasses.
        Closing the iterator closes the upstream response at once."""
        started = time.monotonic()
        first_deadline = min(started + options.first_token_timeout, options.deadline)
        request = client.build_request(
            "POST",
            endpoint(target.base_url, "/messages"),
            content=self._payload(target, body, options, stream=True),
            headers=_headers(target),
        )
        response = await open_stream(client, request, budget=remaining(first_deadline))
        try:
            events = timed_events(response, options, first_deadline, carries_token)
            async with aclosing(translate_stream(events, model=target.upstream_model)) as chunks:
                async for chunk in chunks:
                    yield chunk
            await drain(events)  # past message_stop: let the connection go back to the pool
        finally:
            await response.aclose()
