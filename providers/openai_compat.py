"""Adapter for OpenAI-compatible chat completions (OpenAI, Groq, Together, Fireworks, vLLM, Ollama...)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson

from .base import CallOptions, UpstreamTarget
from .errors import FirstTokenTimeout, UpstreamConnectError, UpstreamError, UpstreamMalformed, UpstreamTimeout
from .sse import iter_sse_bytes
from .transport import drain, open_stream, post, remaining


def _headers(target: UpstreamTarget) -> dict[str, str]:
    headers = {"content-type": "application/json", "accept": "application/json"}
    if target.api_key:
        headers["authorization"] = f"Bearer {target.api_key}"
    headers.update(dict(target.headers))
    return headers


def _thinking_fields(options: CallOptions) -> dict[str, Any]:
    """Map the thinking switch into the OpenAI-compatible dialects' fields."""
    if options.thinking is False:
        return {"reasoning_effort": "none", "chat_template_kwargs": {"enable_thinking": False}}
    return {}


def request_body(body: dict[str, Any], target: UpstreamTarget, options: CallOptions) -> dict[str, Any]:
    """Return the JSON body sent upstream: the request with the upstream model name and thinking switch."""
    out = dict(body)
    out["model"] = target.upstream_model
    out.update(_thinking_fields(options))
    return out


class OpenAICompatibleAdapter:
    dialect = "openai"

    async def complete(
        self, client: httpx.AsyncClient, target: UpstreamTarget, body: dict[str, Any], options: CallOptions
    ) -> dict[str, Any]:
        payload = request_body(body, target, options)
        payload.pop("stream_options", None)
        payload["stream"] = False
        budget = min(options.first_token_timeout, remaining(options.deadline))
        response = await post(client, f"{target.base_url}/chat/completions", content=orjson.dumps(payload),
                              headers=_headers(target), budget=budget)
        try:
            data = orjson.loads(response.content)
        except orjson.JSONDecodeError as exc:
            raise UpstreamMalformed("upstream answered with a body that is not JSON") from exc
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list) or not data["choices"]:
            raise UpstreamMalformed("upstream answer has no choices")
        return data

    async def stream(
        self, client: httpx.AsyncClient, target: UpstreamTarget, body: dict[str, Any], options: CallOptions
    ) -> AsyncIterator[dict[str, Any]]:
        payload = request_body(body, target, options)
        payload["stream"] = True
        payload["stream_options"] = {"include_usage": True}
        request = client.build_request(
            "POST", f"{target.base_url}/chat/completions", content=orjson.dumps(payload), headers=_headers(target)
        )
        first_budget = min(options.first_token_timeout, remaining(options.deadline))
        response = await open_stream(client, request, budget=first_budget)
        try:
            events = iter_sse_bytes(response.aiter_bytes())
            got_token = False
            while True:
                # Before the first token the budget and the deadline bound the wait; after it, only
                # silence does, so a long answer is never cut off for being long.
                wait = options.idle_timeout if got_token else min(first_budget, remaining(options.deadline))
                try:
                    async with asyncio.timeout(wait):
                        _event, data = await anext(events)
                except StopAsyncIteration:
                    raise UpstreamMalformed("stream ended without [DONE]") from None
                except TimeoutError as exc:
                    if got_token:
                        raise UpstreamTimeout(f"upstream sent nothing for {wait:.1f}s") from exc
                    raise FirstTokenTimeout(f"no first token within {first_budget:.1f}s") from exc
                except httpx.TimeoutException as exc:
                    raise UpstreamTimeout("upstream stream timed out") from exc
                except httpx.TransportError as exc:
                    raise UpstreamConnectError(f"upstream stream broke: {exc.__class__.__name__}") from exc
                if data == b"[DONE]":
                    await drain(events)
                    return
                try:
                    chunk = orjson.loads(data)
                except orjson.JSONDecodeError as exc:
                    raise UpstreamMalformed("upstream sent a stream event that is not JSON") from exc
                if not isinstance(chunk, dict):
                    raise UpstreamMalformed("upstream sent a stream event that is not an object")
                if "error" in chunk and not chunk.get("choices"):
                    err = chunk["error"] if isinstance(chunk["error"], dict) else {}
                    raise UpstreamError(str(err.get("message") or "upstream reported an error mid-stream"))
                if not got_token and _carries_token(chunk):
                    got_token = True
                yield chunk
        finally:
            await response.aclose()


def _carries_token(chunk: dict[str, Any]) -> bool:
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta") or {}
        if delta.get("content") or delta.get("reasoning_content") or delta.get("tool_calls") or choice.get("finish_reason"):
            return True
    return False
