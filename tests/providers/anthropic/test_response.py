"""The Anthropic adapter's response and stream translation (pure)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from providers.anthropic import (
    AnthropicAdapter,
    from_anthropic_response,
    translate_stream,
)
from providers.base import UpstreamTarget
from providers.errors import (
    UpstreamMalformed,
    UpstreamStatusError,
)
from providers.sse import iter_sse
from tests.providers.anthropic.conftest import make_options, user

# -- response and stream translation ------------------------------------------------------------------


def test_response_translation_maps_blocks_stop_reason_and_usage() -> None:
    msg = {
        "id": "msg_1",
        "type": "message",
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "text", "text": "Calling."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}},
        ],
        "stop_reason": "tool_use",
        "usage": {
            "input_tokens": 10,
            "output_tokens": 7,
            "cache_read_input_tokens": 100,
            "cache_creation_input_tokens": 5,
        },
    }
    out = from_anthropic_response(msg, model="claude")
    message = out["choices"][0]["message"]
    assert message["content"] == "Calling."
    assert message["reasoning_content"] == "hmm"
    assert message["tool_calls"] == [
        {
            "id": "toolu_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
        }
    ]
    assert out["choices"][0]["finish_reason"] == "tool_calls"
    assert out["usage"] == {
        "prompt_tokens": 115,
        "completion_tokens": 7,
        "total_tokens": 122,
        "prompt_tokens_details": {"cached_tokens": 100},
        "cache_creation_input_tokens": 5,
    }


@pytest.mark.parametrize(
    ("stop", "finish"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("refusal", "content_filter"),
    ],
)
def test_response_translation_maps_stop_reasons(stop: str, finish: str) -> None:
    msg = {"type": "message", "content": [{"type": "text", "text": "x"}], "stop_reason": stop, "usage": {}}
    assert from_anthropic_response(msg, model="m")["choices"][0]["finish_reason"] == finish


async def _aiter(items: list[Any]) -> AsyncIterator[Any]:
    for item in items:
        yield item


async def test_translate_stream_raises_on_overloaded_error_event() -> None:
    events = [
        {"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 3}}},
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ]
    chunks = []
    with pytest.raises(UpstreamStatusError) as caught:
        async for chunk in translate_stream(_aiter(events), model="m"):
            chunks.append(chunk)
    assert caught.value.status == 529 and caught.value.retryable
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"


async def test_translate_stream_without_message_stop_is_malformed() -> None:
    with pytest.raises(UpstreamMalformed):
        async for _ in translate_stream(_aiter([{"type": "message_start", "message": {}}]), model="m"):
            pass


async def test_iter_sse_parses_events_comments_and_multiline_data() -> None:
    lines = [
        "event: a",
        "data: 1",
        "data: 2",
        "",
        ": keepalive",
        "",
        "data:x",
        "",
        "event: cut",
        "data: no end",
    ]
    assert [e async for e in iter_sse(_aiter(lines))] == [("a", "1\n2"), (None, "x")]


async def test_error_event_mid_stream_raises_through_the_adapter() -> None:
    body = (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","usage":{"input_tokens":1}}}\n\n'
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=body))
    target = UpstreamTarget(
        provider="anthropic", dialect="anthropic", base_url="http://mock/v1", upstream_model="m"
    )
    async with httpx.AsyncClient(transport=transport) as client:
        with pytest.raises(UpstreamStatusError) as caught:
            async for _ in AnthropicAdapter().stream(
                client, target, {"messages": user("hi")}, make_options()
            ):
                pass
    assert caught.value.status == 529


async def test_adapter_sends_anthropic_headers() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            200, json={"type": "message", "id": "x", "content": [], "stop_reason": "end_turn", "usage": {}}
        )

    target = UpstreamTarget(
        provider="anthropic",
        dialect="anthropic",
        base_url="http://mock/v1",
        upstream_model="claude-x",
        api_key="sk-1",
    )
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        await AnthropicAdapter().complete(
            client, target, {"model": "ignored", "messages": user("hi")}, make_options()
        )
    request = seen[0]
    assert request.url == "http://mock/v1/messages"
    assert request.headers["x-api-key"] == "sk-1"
    assert request.headers["anthropic-version"] == "2023-06-01"
    sent = orjson.loads(request.content)
    assert sent["model"] == "claude-x" and sent["stream"] is False
