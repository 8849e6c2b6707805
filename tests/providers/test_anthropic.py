"""The Anthropic adapter: pure translation, and end to end against the simulated Anthropic endpoint."""

from __future__ import annotations

import socket
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import orjson
import pytest

from providers.anthropic import (
    AnthropicAdapter,
    from_anthropic_response,
    not_forwarded,
    to_anthropic_request,
    translate_stream,
)
from providers.base import CallOptions, UpstreamTarget
from providers.errors import (
    FirstTokenTimeout,
    UpstreamConnectError,
    UpstreamMalformed,
    UpstreamStatusError,
    UpstreamTimeout,
)
from providers.simulated import SimProfile, SimulatedUpstream, build_app
from providers.simulated.server import running_server
from providers.sse import iter_sse
from tests.providers.conftest import make_profile


def make_options(**overrides: Any) -> CallOptions:
    values: dict[str, Any] = {
        "first_token_timeout": 5.0,
        "idle_timeout": 5.0,
        "deadline": time.monotonic() + 30,
    }
    values.update(overrides)
    return CallOptions(**values)


def sim_profile(**overrides: Any) -> SimProfile:
    return make_profile(**{"ttft_ms": 50, "tokens_per_second": 1000.0, **overrides})


PROFILES = {
    "claude-plain": sim_profile(),
    "claude-switch": sim_profile(reasoning="switchable", reasoning_tokens=40),
    "claude-always": sim_profile(reasoning="always_on", reasoning_tokens=40),
    "claude-deep": sim_profile(reasoning="switchable", reasoning_tokens=3000),  # thinks to its whole budget
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


# -- request translation ------------------------------------------------------------------------------


def test_request_system_and_developer_messages_become_system() -> None:
    body = {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "developer", "content": [{"type": "text", "text": "Use metric units."}]},
            *user("hi"),
        ],
    }
    out = to_anthropic_request(body, make_options())
    assert out["system"] == "Be brief.\n\nUse metric units."
    assert out["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert out["max_tokens"] == 4096
    assert "thinking" not in out


def test_request_images_become_base64_or_url_blocks() -> None:
    parts = [
        {"type": "text", "text": "compare"},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
    ]
    out = to_anthropic_request(
        {"model": "m", "messages": [{"role": "user", "content": parts}]}, make_options()
    )
    blocks = out["messages"][0]["content"]
    assert blocks[1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/jpeg", "data": "AAAA"},
    }
    assert blocks[2] == {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}}


def test_request_tool_calls_and_merged_tool_results() -> None:
    messages = [
        *user("weather in Paris and Rome?"),
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "I should call the tool twice.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "rain"}]},
    ]
    out = to_anthropic_request({"model": "m", "messages": messages, "tools": TOOLS}, make_options())
    assert [m["role"] for m in out["messages"]] == ["user", "assistant", "user"]
    assistant = out["messages"][1]["content"]
    assert assistant == [
        {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "c2", "name": "get_weather", "input": {"city": "Rome"}},
    ]
    assert "I should call" not in orjson.dumps(out).decode()  # reasoning_content is not forwarded
    assert out["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "sunny"},
        {"type": "tool_result", "tool_use_id": "c2", "content": [{"type": "text", "text": "rain"}]},
    ]
    assert out["tools"] == [
        {
            "name": "get_weather",
            "description": "Weather for a city",
            "input_schema": TOOLS[0]["function"]["parameters"],
        }
    ]


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        ("auto", None, {"type": "auto"}),
        ("required", None, {"type": "any"}),
        ("none", None, {"type": "none"}),
        (
            {"type": "function", "function": {"name": "get_weather"}},
            None,
            {"type": "tool", "name": "get_weather"},
        ),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
    ],
)
def test_request_tool_choice_mapping(choice: Any, parallel: Any, expected: dict[str, Any]) -> None:
    body: dict[str, Any] = {"model": "m", "messages": user("hi"), "tools": TOOLS}
    if choice is not None:
        body["tool_choice"] = choice
    if parallel is not None:
        body["parallel_tool_calls"] = parallel
    assert to_anthropic_request(body, make_options())["tool_choice"] == expected


def test_request_sampling_stop_and_user_fields() -> None:
    body = {
        "model": "m",
        "messages": user("hi"),
        "max_completion_tokens": 300,
        "temperature": 0.2,
        "stop": "END",
        "user": "u-42",
    }
    out = to_anthropic_request(body, make_options(thinking=False))
    assert (out["max_tokens"], out["temperature"]) == (300, 0.2)
    assert out["stop_sequences"] == ["END"]
    assert out["metadata"] == {"user_id": "u-42"}
    assert "thinking" not in out
    assert to_anthropic_request({**body, "temperature": None, "top_p": 0.9}, make_options())["top_p"] == 0.9


@pytest.mark.parametrize(
    ("fields", "thinking", "sent", "skipped"),
    [
        # Claude takes temperature or top_p, not both: temperature is kept.
        ({"temperature": 0.2, "top_p": 0.9}, None, {"temperature": 0.2}, {"top_p"}),
        # Anthropic's temperature runs from 0 to 1: above is sent as 1.
        ({"temperature": 1.7}, None, {"temperature": 1}, set()),
        # While thinking, only the default temperature and a top_p from 0.95 are taken.
        ({"temperature": 0.5}, True, {}, {"temperature"}),
        ({"temperature": 1}, True, {}, set()),
        ({"top_p": 0.5}, True, {}, {"top_p"}),
        ({"top_p": 0.97}, True, {"top_p": 0.97}, set()),
        ({"seed": 1, "logprobs": False, "frequency_penalty": 0}, None, {},
         {"seed", "logprobs", "frequency_penalty"}),
        ({"reasoning_effort": "high"}, None, {}, {"reasoning_effort"}),
        ({"reasoning_effort": "high"}, True, {"thinking": {"type": "enabled", "budget_tokens": 3072}}, set()),
        # Anthropic refuses thinking with a forced tool call: the call goes without thinking.
        ({"reasoning_effort": "high", "tools": TOOLS, "tool_choice": "required"}, True, {"tool_choice": {"type": "any"}},
         {"reasoning_effort"}),
        ({"tools": [*TOOLS, {"type": "custom", "custom": {"name": "sql"}}]}, None,
         {"tools": [{"name": "get_weather", "description": "Weather for a city",
                     "input_schema": TOOLS[0]["function"]["parameters"]}]}, {"tools"}),
        ({"tools": TOOLS, "tool_choice": {"type": "custom", "custom": {"name": "sql"}}}, None, {}, {"tool_choice"}),
    ],
)
def test_request_carries_all_but_what_it_reports_not_forwarded(fields: dict[str, Any], thinking: bool | None,
                                                               sent: dict[str, Any], skipped: set[str]) -> None:
    body = {"model": "m", "messages": user("hi"), "max_tokens": 4096, **fields}
    out = to_anthropic_request(body, make_options(thinking=thinking))
    assert {k: out.get(k) for k in sent} == sent
    assert not_forwarded(body, thinking) == skipped
    for name in skipped - {"tools"}:
        assert name not in out


def test_request_allowed_tools_narrows_the_tools_and_says_whether_one_must_be_called() -> None:
    tools = [*TOOLS, {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}]
    for mode, kind in (("required", "any"), ("auto", "auto")):
        choice = {"type": "allowed_tools",
                  "allowed_tools": {"mode": mode, "tools": [{"type": "function", "function": {"name": "get_time"}}]}}
        out = to_anthropic_request({"model": "m", "messages": user("hi"), "tools": tools, "tool_choice": choice},
                                   make_options())
        assert [t["name"] for t in out["tools"]] == ["get_time"]
        assert out["tool_choice"] == {"type": kind}


def test_request_thinking_budget_defaults_and_drops_temperature() -> None:
    body = {"model": "m", "messages": user("hi"), "max_tokens": 8000, "temperature": 0.5}
    out = to_anthropic_request(body, make_options(thinking=True))
    assert out["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert out["max_tokens"] == 8000
    assert "temperature" not in out
    unset = to_anthropic_request({"model": "m", "messages": user("hi")}, make_options(thinking=True))
    assert unset["max_tokens"] == 4096 and unset["thinking"]["type"] == "enabled"  # Anthropic needs max_tokens
    assert "thinking" not in to_anthropic_request(
        {"model": "m", "messages": user("hi")}, make_options(thinking=None)
    )


@pytest.mark.parametrize("max_tokens", [1280, 1500, 2000, 3000, 40000])
def test_request_thinking_budget_fits_inside_the_callers_max_tokens(max_tokens: int) -> None:
    out = to_anthropic_request(
        {"model": "m", "messages": user("hi"), "max_tokens": max_tokens}, make_options(thinking=True)
    )
    assert out["max_tokens"] == max_tokens  # never raised: thinking counts toward it
    budget = out["thinking"]["budget_tokens"]
    assert 1024 <= budget <= max_tokens - 256  # Anthropic's minimum, and room left for the answer


@pytest.mark.parametrize("max_tokens", [500, 1024, 1279])
def test_request_without_room_for_the_minimum_budget_sends_no_thinking(max_tokens: int) -> None:
    body = {"model": "m", "messages": user("hi"), "max_tokens": max_tokens, "temperature": 0.5}
    out = to_anthropic_request(body, make_options(thinking=True))
    assert "thinking" not in out
    assert (out["max_tokens"], out["temperature"]) == (max_tokens, 0.5)


def test_request_reasoning_effort_sets_the_budget_inside_max_tokens() -> None:
    budgets = {}
    for effort in ("minimal", "low", "medium", "high", "xhigh"):
        body = {"model": "m", "messages": user("hi"), "max_tokens": 8000, "reasoning_effort": effort}
        out = to_anthropic_request(body, make_options(thinking=True))
        assert out["max_tokens"] == 8000
        budgets[effort] = out["thinking"]["budget_tokens"]
    assert budgets == {"minimal": 1024, "low": 2000, "medium": 4000, "high": 6000, "xhigh": 7744}
    body = {"model": "m", "messages": user("hi"), "max_tokens": 8000}
    assert not not_forwarded({**body, "reasoning_effort": "high"}, True)
    assert not_forwarded({**body, "reasoning_effort": "high"}, None) == {"reasoning_effort"}  # thinking off
    assert not_forwarded({**body, "reasoning_effort": "none"}, True) == {"reasoning_effort"}


def test_request_response_format_asks_for_json_in_the_system_prompt() -> None:
    schema = {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    out = to_anthropic_request({"model": "m", "messages": user("hi"), "response_format": fmt}, make_options())
    assert "only a JSON document" in out["system"]
    assert orjson.dumps(schema).decode() in out["system"]


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


# -- end to end against the simulated upstream ----------------------------------------------------------


@pytest.fixture(scope="module")
def sim() -> Iterator[tuple[str, Any]]:
    app = build_app(profiles=PROFILES, time_scale=0)
    with running_server(app) as url:
        yield url, app


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=httpx.Timeout(10.0)) as c:
        yield c


def target_for(sim: tuple[str, Any], model: str = "claude-plain") -> UpstreamTarget:
    return UpstreamTarget(
        provider="simulated",
        dialect="anthropic",
        base_url=f"{sim[0]}/anthropic/v1",
        upstream_model=model,
        api_key="sim-key",
    )


async def collect(stream: AsyncIterator[dict[str, Any]]) -> list[dict[str, Any]]:
    return [chunk async for chunk in stream]


async def test_complete_returns_a_chat_completion(sim: Any, client: httpx.AsyncClient) -> None:
    out = await AnthropicAdapter().complete(
        client, target_for(sim), {"messages": user("hello")}, make_options()
    )
    assert out["object"] == "chat.completion"
    assert out["model"] == "claude-plain"
    assert out["choices"][0]["message"]["content"].startswith("[simulated claude-plain] ")
    assert out["choices"][0]["finish_reason"] == "stop"
    assert out["usage"]["completion_tokens"] == 40
    assert out["usage"]["prompt_tokens"] > 0


async def test_complete_with_thinking_gives_reasoning_content(sim: Any, client: httpx.AsyncClient) -> None:
    adapter = AnthropicAdapter()
    on = await adapter.complete(
        client, target_for(sim, "claude-switch"), {"messages": user("q")}, make_options(thinking=True)
    )
    off = await adapter.complete(
        client, target_for(sim, "claude-switch"), {"messages": user("q")}, make_options(thinking=False)
    )
    assert on["choices"][0]["message"]["reasoning_content"]
    assert "reasoning_content" not in off["choices"][0]["message"]


async def test_complete_tool_use_becomes_tool_calls(sim: Any, client: httpx.AsyncClient) -> None:
    body = {"messages": user("weather? [sim:tool_call]"), "tools": TOOLS}
    out = await AnthropicAdapter().complete(client, target_for(sim), body, make_options())
    choice = out["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    call = choice["message"]["tool_calls"][0]
    assert call["function"]["name"] == "get_weather"
    assert list(orjson.loads(call["function"]["arguments"])) == ["city"]


async def test_complete_max_tokens_becomes_length(sim: Any, client: httpx.AsyncClient) -> None:
    body = {"messages": user("long [sim:tokens=100]"), "max_tokens": 10}
    out = await AnthropicAdapter().complete(client, target_for(sim), body, make_options())
    assert out["choices"][0]["finish_reason"] == "length"
    assert out["usage"]["completion_tokens"] == 10


async def test_complete_json_schema_is_answered_through_the_system_prompt(
    sim: Any, client: httpx.AsyncClient
) -> None:
    schema = {"type": "object", "required": ["score"], "properties": {"score": {"type": "integer"}}}
    body = {
        "messages": user("rate it"),
        "response_format": {"type": "json_schema", "json_schema": {"schema": schema}},
    }
    out = await AnthropicAdapter().complete(client, target_for(sim), body, make_options())
    assert set(orjson.loads(out["choices"][0]["message"]["content"])) == {"score"}


async def test_stream_yields_role_content_finish_and_usage(sim: Any, client: httpx.AsyncClient) -> None:
    chunks = await collect(
        AnthropicAdapter().stream(client, target_for(sim), {"messages": user("hi")}, make_options())
    )
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks[1:-2])
    assert text.startswith("[simulated claude-plain] ")
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["completion_tokens"] == 40
    assert chunks[-1]["usage"]["prompt_tokens"] > 0
    assert all(c["object"] == "chat.completion.chunk" and c["id"].startswith("msg_") for c in chunks)


async def test_stream_thinking_becomes_reasoning_content(sim: Any, client: httpx.AsyncClient) -> None:
    chunks = await collect(
        AnthropicAdapter().stream(
            client, target_for(sim, "claude-always"), {"messages": user("q")}, make_options()
        )
    )
    deltas = [c["choices"][0]["delta"] for c in chunks[1:-2]]
    reasoning = "".join(d.get("reasoning_content", "") for d in deltas)
    assert reasoning and deltas[0].get("reasoning_content")
    assert "".join(d.get("content", "") for d in deltas).startswith("[simulated claude-always] ")


async def test_stream_tool_use_becomes_tool_call_deltas(sim: Any, client: httpx.AsyncClient) -> None:
    body = {"messages": user("[sim:tool_call=get_weather]"), "tools": TOOLS}
    chunks = await collect(AnthropicAdapter().stream(client, target_for(sim), body, make_options()))
    calls = [
        c["choices"][0]["delta"]["tool_calls"][0]
        for c in chunks
        if c["choices"] and "tool_calls" in c["choices"][0]["delta"]
    ]
    assert calls[0]["index"] == 0 and calls[0]["id"].startswith("toolu_") and calls[0]["type"] == "function"
    assert calls[0]["function"] == {"name": "get_weather", "arguments": ""}
    assert orjson.loads("".join(c["function"]["arguments"] for c in calls)).keys() == {"city"}
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"


async def test_stream_max_tokens_during_thinking_is_length_without_content(
    sim: Any, client: httpx.AsyncClient
) -> None:
    body = {"messages": user("q"), "max_tokens": 20}
    chunks = await collect(
        AnthropicAdapter().stream(client, target_for(sim, "claude-always"), body, make_options())
    )
    deltas = [c["choices"][0]["delta"] for c in chunks[1:-2]]
    assert all("content" not in d for d in deltas)
    assert chunks[-2]["choices"][0]["finish_reason"] == "length"


@pytest.mark.parametrize("status", [503, 429])
async def test_status_errors_are_retryable_upstream_status_errors(
    sim: Any, client: httpx.AsyncClient, status: int
) -> None:
    body = {"messages": user(f"[sim:fail={status}]")}
    with pytest.raises(UpstreamStatusError) as caught:
        await AnthropicAdapter().complete(client, target_for(sim), body, make_options())
    assert caught.value.status == status and caught.value.retryable
    with pytest.raises(UpstreamStatusError) as caught:
        await collect(AnthropicAdapter().stream(client, target_for(sim), body, make_options()))
    assert caught.value.status == status


async def test_bad_request_is_not_retryable(sim: Any, client: httpx.AsyncClient) -> None:
    body = {"messages": user("q"), "max_tokens": -5}
    with pytest.raises(UpstreamStatusError) as caught:
        await AnthropicAdapter().complete(client, target_for(sim), body, make_options())
    assert caught.value.status == 400 and not caught.value.retryable
    assert "invalid_request_error" in caught.value.message


async def test_connection_refused_is_a_connect_error(client: httpx.AsyncClient) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    target = UpstreamTarget("simulated", "anthropic", f"http://127.0.0.1:{port}/anthropic/v1", "claude-plain")
    with pytest.raises(UpstreamConnectError):
        await AnthropicAdapter().complete(client, target, {"messages": user("q")}, make_options())
    with pytest.raises(UpstreamConnectError):
        await collect(AnthropicAdapter().stream(client, target, {"messages": user("q")}, make_options()))


async def test_stall_beyond_the_first_token_budget_times_out(sim: Any, client: httpx.AsyncClient) -> None:
    body = {"messages": user("[sim:stall_ms=3000]")}
    started = time.monotonic()
    with pytest.raises(FirstTokenTimeout):
        await collect(
            AnthropicAdapter().stream(client, target_for(sim), body, make_options(first_token_timeout=0.3))
        )
    with pytest.raises(UpstreamTimeout):
        await AnthropicAdapter().complete(
            client, target_for(sim), body, make_options(first_token_timeout=0.3)
        )
    assert time.monotonic() - started < 2


async def test_silence_mid_stream_beyond_idle_timeout_is_a_timeout(
    sim: Any, client: httpx.AsyncClient
) -> None:
    body = {"messages": user("[sim:idle_ms=3000]")}
    with pytest.raises(UpstreamTimeout) as caught:
        await collect(
            AnthropicAdapter().stream(client, target_for(sim), body, make_options(idle_timeout=0.3))
        )
    assert not isinstance(caught.value, FirstTokenTimeout)


async def test_broken_and_malformed_streams_raise_upstream_errors(
    sim: Any, client: httpx.AsyncClient
) -> None:
    adapter = AnthropicAdapter()
    with pytest.raises(UpstreamConnectError):
        await collect(
            adapter.stream(
                client, target_for(sim), {"messages": user("[sim:fail_at_chunk=2]")}, make_options()
            )
        )
    with pytest.raises(UpstreamMalformed):
        await collect(
            adapter.stream(client, target_for(sim), {"messages": user("[sim:malformed]")}, make_options())
        )
    with pytest.raises(UpstreamMalformed):
        await adapter.complete(client, target_for(sim), {"messages": user("[sim:malformed]")}, make_options())


async def test_closing_the_stream_cancels_the_upstream_request(sim: Any, client: httpx.AsyncClient) -> None:
    url, app = sim
    body = {"messages": user("[sim:idle_ms=5000][sim:tag=adapter-close]")}
    stream = AnthropicAdapter().stream(client, target_for(sim), body, make_options())
    async for chunk in stream:
        if chunk["choices"] and chunk["choices"][0]["delta"].get("content"):
            break
    await stream.aclose()
    deadline = time.monotonic() + 5
    while (
        app.stats()["by_tag"].get("adapter-close", {}).get("cancelled") != 1 and time.monotonic() < deadline
    ):
        async with httpx.AsyncClient() as probe:  # a round trip lets the server's loop notice the disconnect
            await probe.get(f"{url}/health")
    assert app.stats()["by_tag"]["adapter-close"]["cancelled"] == 1


@pytest.fixture(scope="module")
def recorded_sim() -> Iterator[tuple[str, SimulatedUpstream]]:
    """The simulated upstream, recording the JSON bodies it receives."""
    app = build_app(profiles=PROFILES, time_scale=0, record_requests=100)
    with running_server(app) as url:
        yield url, app


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("max_tokens", [500, 1024, 1100, 1300, 2000, 5000])
async def test_thinking_never_raises_the_max_tokens_the_upstream_receives(
    recorded_sim: tuple[str, SimulatedUpstream], client: httpx.AsyncClient, max_tokens: int, stream: bool
) -> None:
    url, app = recorded_sim
    target = target_for((url, None), "claude-deep")
    body = {"messages": user("think hard"), "max_tokens": max_tokens}
    adapter = AnthropicAdapter()
    if stream:
        usage = (await collect(adapter.stream(client, target, body, make_options(thinking=True))))[-1]["usage"]
    else:
        usage = (await adapter.complete(client, target, body, make_options(thinking=True)))["usage"]
    sent = app.received()[-1]["body"]
    assert sent["max_tokens"] == max_tokens
    if max_tokens < 1024 + 256:  # no room for Anthropic's minimum budget and an answer: thinking stays off
        assert "thinking" not in sent
    else:
        assert 1024 <= sent["thinking"]["budget_tokens"] <= max_tokens - 256
    assert 0 < usage["completion_tokens"] <= max_tokens  # what is returned and billed
