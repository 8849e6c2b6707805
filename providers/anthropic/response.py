"""Anthropic Messages answers (whole or streamed) → OpenAI-shaped completions and chunks."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import orjson

from ..errors import UpstreamError, UpstreamMalformed, UpstreamStatusError

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


def carries_token(event: dict[str, Any]) -> bool:
    """Return True when the event ends the wait for a first token (content, thinking, a tool call, or the end)."""
    kind = event.get("type")
    if kind == "content_block_delta":
        return (event.get("delta") or {}).get("type") in ("text_delta", "thinking_delta", "input_json_delta")
    if kind == "content_block_start":
        return (event.get("content_block") or {}).get("type") == "tool_use"
    # An answer that ends (or fails) before any content still ends the wait for a first token.
    return kind in ("message_delta", "message_stop", "error")
