"""The Anthropic adapter end to end against the simulated Anthropic endpoint."""

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
)
from providers.base import UpstreamTarget
from providers.errors import (
    FirstTokenTimeout,
    UpstreamConnectError,
    UpstreamMalformed,
    UpstreamStatusError,
    UpstreamTimeout,
)
from providers.simulated import SimulatedUpstream, build_app
from providers.simulated.server import running_server
from tests.providers.anthropic.conftest import PROFILES, TOOLS, make_options, user

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
