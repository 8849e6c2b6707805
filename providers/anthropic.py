"""Adapter for the Anthropic Messages API: OpenAI-shaped bodies in, OpenAI-shaped answers out."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

import httpx
import orjson

from .base import CallOptions, UpstreamTarget
from .errors import (
    FirstTokenTimeout,
    UpstreamConnectError,
    UpstreamError,
    UpstreamMalformed,
    UpstreamStatusError,
    UpstreamTimeout,
)
from .sse import iter_sse_bytes
from .transport import drain, open_stream, post, remaining

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096  # Anthropic requires max_tokens; OpenAI callers often leave it out
MIN_THINKING_BUDGET = 1024  # Anthropic's floor for thinking.budget_tokens
JSON_INSTRUCTION = "Respond with only a JSON document: no prose before or after it, no code fences."

FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}
# Statuses Anthropic answers with each error type outside a stream, for errors that arrive mid-stream.
_ERROR_STATUSES = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


# -- request translation ------------------------------------------------------------------------------


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"
        )
    return ""


def _image_block(part: dict[str, Any]) -> dict[str, Any]:
    image = part.get("image_url")
    url = image.get("url", "") if isinstance(image, dict) else str(image or "")
    if url.startswith("data:"):
        header, _, data = url.partition(",")
        media_type = header[5:].split(";", 1)[0] or "image/png"
        return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _user_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks: list[dict[str, Any]] = []
    for part in content or ():
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            blocks.append({"type": "text", "text": part.get("text", "")})
        elif part.get("type") == "image_url":
            blocks.append(_image_block(part))
        else:
            # Passed on as written: Anthropic refuses what it does not know, and says why.
            blocks.append(part)
    return blocks


def _tool_input(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    try:
        value = orjson.loads(arguments or "{}")
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _assistant_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    # reasoning_content is deliberately not forwarded: the spec accepts it back and drops it.
    blocks: list[dict[str, Any]] = []
    text = _text_of(message.get("content"))
    if text:
        blocks.append({"type": "text", "text": text})
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id", ""),
                "name": function.get("name", ""),
                "input": _tool_input(function.get("arguments")),
            }
        )
    return blocks


def _tool_result_block(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    result: Any = (
        content
        if isinstance(content, str)
        else [
            {"type": "text", "text": p.get("text", "")}
            for p in content or ()
            if isinstance(p, dict) and p.get("type") == "text"
        ]
    )
    return {"type": "tool_result", "tool_use_id": message.get("tool_call_id", ""), "content": result}


def _messages(messages: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role in ("system", "developer"):
            system.append(_text_of(message.get("content")))
            continue
        if role == "assistant":
            turn_role, blocks = "assistant", _assistant_blocks(message)
        elif role == "tool":
            turn_role, blocks = "user", [_tool_result_block(message)]
        else:
            turn_role, blocks = "user", _user_blocks(message.get("content"))
        if not blocks:
            continue
        # Anthropic wants alternating turns: tool results (and text after them) share one user turn.
        if out and out[-1]["role"] == turn_role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": turn_role, "content": blocks})
    return system, out


def _tool_choice(choice: Any, parallel: Any) -> dict[str, Any] | None:
    mapped: dict[str, Any] | None
    if choice == "auto":
        mapped = {"type": "auto"}
    elif choice == "required":
        mapped = {"type": "any"}
    elif choice == "none":
        mapped = {"type": "none"}
    elif isinstance(choice, dict) and choice.get("type") == "function":
        mapped = {"type": "tool", "name": (choice.get("function") or {}).get("name", "")}
    else:
        mapped = None
    if parallel is False and (mapped is None or mapped["type"] != "none"):
        mapped = {**(mapped or {"type": "auto"}), "disable_parallel_tool_use": True}
    return mapped


def _json_instruction(response_format: Any) -> str | None:
    if not isinstance(response_format, dict):
        return None
    if response_format.get("type") == "json_object":
        return JSON_INSTRUCTION
    if response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        if schema is None:
            return JSON_INSTRUCTION
        return f"{JSON_INSTRUCTION} It must match this JSON schema: {orjson.dumps(schema).decode()}"
    return None


def to_anthropic_request(body: dict[str, Any], options: CallOptions) -> dict[str, Any]:
    """Return the Anthropic Messages body for an OpenAI chat-completions body (without `stream`).

    Thinking is enabled only when `options.thinking is True`; max_tokens is then raised by the budget
    when it would not exceed it, so the caller's room for the answer is kept."""
    system, messages = _messages(body.get("messages") or [])
    max_tokens = body.get("max_completion_tokens") or body.get("max_tokens") or DEFAULT_MAX_TOKENS
    out: dict[str, Any] = {"model": body.get("model"), "messages": messages, "max_tokens": max_tokens}
    instruction = _json_instruction(body.get("response_format"))
    if instruction:
        system.append(instruction)
    if system:
        out["system"] = "\n\n".join(s for s in system if s)
    stop = body.get("stop")
    if stop:
        out["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    for name in ("temperature", "top_p"):
        if body.get(name) is not None:
            out[name] = body[name]
    if body.get("tools"):
        out["tools"] = [
            {
                "name": t["function"]["name"],
                **({"description": t["function"]["description"]} if t["function"].get("description") else {}),
                "input_schema": t["function"].get("parameters") or {"type": "object", "properties": {}},
            }
            for t in body["tools"]
            if isinstance(t, dict) and isinstance(t.get("function"), dict)
        ]
    choice = _tool_choice(body.get("tool_choice"), body.get("parallel_tool_calls"))
    if choice is not None and (out.get("tools") or choice["type"] == "none"):
        out["tool_choice"] = choice
    if body.get("user"):
        out["metadata"] = {"user_id": str(body["user"])}
    # Anthropic refuses thinking together with a forced tool choice, so a forced call goes without.
    forced = choice is not None and choice["type"] in ("any", "tool")
    if options.thinking is True and not forced:
        budget = options.thinking_budget or max(MIN_THINKING_BUDGET, min(max_tokens // 2, 16000))
        budget = max(budget, MIN_THINKING_BUDGET)
        if max_tokens <= budget:
            out["max_tokens"] = budget + max_tokens
        out["thinking"] = {"type": "enabled", "budget_tokens": budget}
        out.pop("temperature", None)  # Anthropic accepts only the default temperature while thinking
    return out


# -- response translation -----------------------------------------------------------------------------


def openai_usage(usage: dict[str, Any]) -> dict[str, Any]:
    """Return OpenAI usage for Anthropic usage: prompt tokens include cache reads and cache writes."""
    input_tokens = int(usage.get("input_tokens") or 0)
    cache_read = int(usage.get("cache_read_input_tokens") or 0)
    cache_creation = int(usage.get("cache_creation_input_tokens") or 0)
    output_tokens = int(usage.get("output_tokens") or 0)
    prompt_tokens = input_tokens + cache_read + cache_creation
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": output_tokens,
        "total_tokens": prompt_tokens + output_tokens,
        "prompt_tokens_details": {"cached_tokens": cache_read},
        "cache_creation_input_tokens": cache_creation,
    }


def from_anthropic_response(msg: dict[str, Any], *, model: str) -> dict[str, Any]:
    """Return the OpenAI `chat.completion` for an Anthropic `message`; raise UpstreamMalformed if it is not one."""
    content = msg.get("content")
    if not isinstance(content, list):
        raise UpstreamMalformed("upstream answer has no content list")
    texts: list[str] = []
    thinking: list[str] = []
    tool_calls: list[dict[str, Any]] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(block.get("text", ""))
        elif kind == "thinking":
            thinking.append(block.get("thinking", ""))
        elif kind == "tool_use":
            tool_calls.append(
                {
                    "id": block.get("id", ""),
                    "type": "function",
                    "function": {
                        "name": block.get("name", ""),
                        "arguments": orjson.dumps(block.get("input") or {}).decode(),
                    },
                }
            )
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None}
    if thinking:
        message["reasoning_content"] = "".join(thinking)
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": msg.get("id", ""),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": FINISH_REASONS.get(msg.get("stop_reason") or "", "stop"),
            }
        ],
        "usage": openai_usage(msg.get("usage") or {}),
    }


def stream_error(payload: dict[str, Any]) -> UpstreamError:
    """Return our error for an Anthropic `error` event (overloaded_error is a retryable 529)."""
    error = payload.get("error") if isinstance(payload.get("error"), dict) else {}
    kind = str(error.get("type") or "api_error")
    message = str(error.get("message") or kind)
    status = _ERROR_STATUSES.get(kind)
    if status is None:
        return UpstreamError(f"upstream error mid-stream: {kind}: {message}")
    return UpstreamStatusError(f"upstream error mid-stream: {kind}: {message}", status=status)


async def translate_stream(
    events: AsyncIterator[dict[str, Any]], *, model: str
) -> AsyncIterator[dict[str, Any]]:
    """Yield OpenAI chunks for parsed Anthropic stream events: a role chunk, deltas, a finish_reason chunk,
    then a usage chunk with empty choices; raise UpstreamError on an `error` event and UpstreamMalformed
    when the stream ends before `message_stop`."""
    base: dict[str, Any] = {
        "id": "",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }
    usage: dict[str, Any] = {}
    tool_index: dict[int, int] = {}  # Anthropic block index -> OpenAI tool_calls index

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    async for event in events:
        kind = event.get("type")
        if kind == "content_block_delta":
            delta = event.get("delta") or {}
            dtype = delta.get("type")
            if dtype == "text_delta":
                yield chunk({"content": delta.get("text", "")})
            elif dtype == "thinking_delta":
                yield chunk({"reasoning_content": delta.get("thinking", "")})
            elif dtype == "input_json_delta" and delta.get("partial_json"):
                index = tool_index.get(event.get("index", -1), 0)
                yield chunk(
                    {"tool_calls": [{"index": index, "function": {"arguments": delta["partial_json"]}}]}
                )
        elif kind == "content_block_start":
            block = event.get("content_block") or {}
            if block.get("type") == "tool_use":
                index = tool_index[event.get("index", len(tool_index))] = len(tool_index)
                call = {
                    "index": index,
                    "id": block.get("id", ""),
                    "type": "function",
                    "function": {"name": block.get("name", ""), "arguments": ""},
                }
                yield chunk({"tool_calls": [call]})
            elif block.get("type") == "text" and block.get("text"):
                yield chunk({"content": block["text"]})
        elif kind == "message_start":
            message = event.get("message") or {}
            base["id"] = message.get("id", "")
            usage.update(message.get("usage") or {})
            yield chunk({"role": "assistant", "content": ""})
        elif kind == "message_delta":
            usage.update({k: v for k, v in (event.get("usage") or {}).items() if v is not None})
            stop_reason = (event.get("delta") or {}).get("stop_reason")
            yield chunk({}, FINISH_REASONS.get(stop_reason or "", "stop"))
        elif kind == "message_stop":
            yield {**base, "choices": [], "usage": openai_usage(usage)}
            return
        elif kind == "error":
            raise stream_error(event)
        # ping, content_block_stop, signature deltas and unknown events carry nothing for OpenAI clients.
    raise UpstreamMalformed("stream ended before message_stop")


def _carries_token(event: dict[str, Any]) -> bool:
    kind = event.get("type")
    if kind == "content_block_delta":
        return (event.get("delta") or {}).get("type") in ("text_delta", "thinking_delta", "input_json_delta")
    if kind == "content_block_start":
        return (event.get("content_block") or {}).get("type") == "tool_use"
    # An answer that ends (or fails) before any content still ends the wait for a first token.
    return kind in ("message_delta", "message_stop", "error")


# -- HTTP -----------------------------------------------------------------------------------------------


def _headers(target: UpstreamTarget) -> dict[str, str]:
    headers = {
        "content-type": "application/json",
        "accept": "application/json",
        "anthropic-version": ANTHROPIC_VERSION,
    }
    if target.api_key:
        headers["x-api-key"] = target.api_key
    headers.update(dict(target.headers))
    return headers


class AnthropicAdapter:
    """ProviderAdapter for the Anthropic Messages API (`POST {base_url}/messages`)."""

    dialect = "anthropic"

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
        response = await post(client, f"{target.base_url}/messages", content=content, headers=_headers(target),
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
            f"{target.base_url}/messages",
            content=self._payload(target, body, options, stream=True),
            headers=_headers(target),
        )
        response = await open_stream(client, request, budget=remaining(first_deadline))
        try:
            events = _timed_events(response, options, first_deadline)
            async with aclosing(translate_stream(events, model=target.upstream_model)) as chunks:
                async for chunk in chunks:
                    yield chunk
            await drain(events)  # past message_stop: let the connection go back to the pool
        finally:
            await response.aclose()


async def _timed_events(
    response: httpx.Response, options: CallOptions, first_deadline: float
) -> AsyncIterator[dict[str, Any]]:
    """Yield parsed events, enforcing the first-token deadline, the idle timeout and the total deadline."""
    async with aclosing(iter_sse_bytes(response.aiter_bytes())) as sse:
        got_token = False
        while True:
            until = time.monotonic() + options.idle_timeout if got_token else first_deadline
            wait = remaining(min(until, options.deadline))
            try:
                async with asyncio.timeout(wait):
                    _name, data = await anext(sse)
            except StopAsyncIteration:
                return
            except TimeoutError as exc:
                if not got_token:
                    raise FirstTokenTimeout(
                        f"no first token within {options.first_token_timeout:.1f}s"
                    ) from exc
                raise UpstreamTimeout(f"upstream sent nothing for {wait:.1f}s") from exc
            except httpx.TimeoutException as exc:
                raise UpstreamTimeout("upstream stream timed out") from exc
            except httpx.TransportError as exc:
                raise UpstreamConnectError(f"upstream stream broke: {exc.__class__.__name__}") from exc
            try:
                event = orjson.loads(data)
            except orjson.JSONDecodeError as exc:
                raise UpstreamMalformed("upstream sent a stream event that is not JSON") from exc
            if not isinstance(event, dict):
                raise UpstreamMalformed("upstream sent a stream event that is not an object")
            if not got_token and _carries_token(event):
                got_token = True
            yield event
