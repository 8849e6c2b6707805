"""Adapter for OpenAI-compatible chat completions (OpenAI, Groq, Together, Fireworks, vLLM, Ollama...)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from functools import lru_cache
from typing import Any

import httpx
import orjson

from .base import CallOptions, ThinkingTraits, UpstreamTarget
from .errors import UpstreamMalformed
from .transport import endpoint, open_stream, post, remaining, timed_events


@lru_cache(maxsize=1024)
def _headers(target: UpstreamTarget) -> dict[str, str]:
    """The request headers for a route (built once per route; read-only)."""
    headers = {"content-type": "application/json", "accept": "application/json"}
    if target.api_key:
        headers["authorization"] = f"Bearer {target.api_key}"
    return headers


# The fields that turn thinking on or off, by the switch a route declares (see base.THINKING_SWITCHES). On
# with reasoning_effort sends nothing: on is the default there, and the client's own effort, if any, stands.
THINKING_FIELDS: dict[str, Callable[[bool], dict[str, Any]]] = {
    "reasoning_effort": lambda on: {} if on else {"reasoning_effort": "none"},
    "chat_template_kwargs": lambda on: {"chat_template_kwargs": {"enable_thinking": on}},
    "reasoning_enabled": lambda on: {"reasoning": {"enabled": on}},
}


def _thinking_fields(switch: str, thinking: bool | None) -> dict[str, Any]:
    """Return the thinking switch's fields for this route: none when the model is left to its default or the
    route declares no switch."""
    fields = THINKING_FIELDS.get(switch)
    return fields(thinking) if fields is not None and thinking is not None else {}


def request_body(body: dict[str, Any], target: UpstreamTarget, options: CallOptions) -> dict[str, Any]:
    """Return the JSON body sent upstream: the request with the upstream model name and thinking switch."""
    out = dict(body)
    out["model"] = target.upstream_model
    out.update(_thinking_fields(target.thinking_switch, options.thinking))
    return out


class OpenAICompatibleAdapter:
    dialect = "openai"
    # Hybrid models served OpenAI-style (Qwen3 and the like) think unless they are switched off.
    thinking = ThinkingTraits(on_by_default=True)

    def not_forwarded(self, body: dict[str, Any], target: UpstreamTarget, thinking: bool | None) -> frozenset[str]:
        """Return what the thinking switch overrides: the client's reasoning_effort, when thinking is switched
        off with reasoning_effort "none". The rest of the body is sent as written."""
        effort = body.get("reasoning_effort")
        switched = _thinking_fields(target.thinking_switch, thinking).get("reasoning_effort", effort)
        return frozenset({"reasoning_effort"}) if effort is not None and switched != effort else frozenset()

    async def complete(
        self, client: httpx.AsyncClient, target: UpstreamTarget, body: dict[str, Any], options: CallOptions
    ) -> dict[str, Any]:
        payload = request_body(body, target, options)
        payload.pop("stream_options", None)
        payload["stream"] = False
        budget = min(options.first_token_timeout, remaining(options.deadline))
        response = await post(client, endpoint(target.base_url, "/chat/completions"), content=orjson.dumps(payload),
                              headers=_headers(target), budget=budget)
        try:
            data = orjson.loads(response.content)
        except orjson.JSONDecodeError as exc:
            raise UpstreamMalformed("upstream answered with a body that is not JSON") from exc
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list) or not data["choices"]:
            raise UpstreamMalformed("upstream answer has no choices")
        return data

    def stream(
        self, client: httpx.AsyncClient, target: UpstreamTarget, body: dict[str, Any], options: CallOptions
    ) -> AsyncIterator[dict[str, Any]]:
        payload = request_body(body, target, options)
        payload["stream"] = True
        payload["stream_options"] = {"include_usage": True}
        request = client.build_request(
            "POST", endpoint(target.base_url, "/chat/completions"), content=orjson.dumps(payload),
            headers=_headers(target),
        )
        # The first-token budget covers the response headers and the first token together.
        first_deadline = min(time.monotonic() + options.first_token_timeout, options.deadline)
        return timed_events(lambda: open_stream(client, request, budget=remaining(first_deadline)), options,
                            first_deadline, _carries_token, done=b"[DONE]", error_in=_stream_error)


def _stream_error(chunk: dict[str, Any]) -> str | None:
    """The message of an error event sent mid-stream (an object with `error` and no choices)."""
    if "error" in chunk and not chunk.get("choices"):
        err = chunk["error"] if isinstance(chunk["error"], dict) else {}
        return str(err.get("message") or "upstream reported an error mid-stream")
    return None


def _carries_token(chunk: dict[str, Any]) -> bool:
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta") or {}
        if delta.get("content") or delta.get("reasoning_content") or delta.get("tool_calls") or choice.get("finish_reason"):
            return True
    return False
