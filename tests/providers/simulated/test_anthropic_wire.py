"""The simulated upstream's Anthropic wire."""

from __future__ import annotations

import httpx
import orjson

from tests.providers.simulated.conftest import (
    PROFILES,
    TOOLS,
    anthropic_events,
    user,
)

# -- Anthropic wire ---------------------------------------------------------------------------------


async def test_anthropic_requires_max_tokens(client: httpx.AsyncClient) -> None:
    r = await client.post("/anthropic/v1/messages", json={"model": "sim-plain", "messages": user("hi")})
    assert r.status_code == 400
    assert r.json()["type"] == "error"
    assert r.json()["error"]["type"] == "invalid_request_error"


async def test_anthropic_non_streamed_message_shape(client: httpx.AsyncClient) -> None:
    body = {
        "model": "sim-switch",
        "max_tokens": 2000,
        "messages": user("hi"),
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }
    data = (await client.post("/anthropic/v1/messages", json=body)).json()
    assert data["type"] == "message" and data["role"] == "assistant" and data["id"].startswith("msg_")
    assert [b["type"] for b in data["content"]] == ["thinking", "text"]
    assert data["content"][0]["signature"]
    assert data["content"][1]["text"].startswith("[simulated sim-switch] ")
    assert data["stop_reason"] == "end_turn"
    assert data["usage"]["output_tokens"] == 70
    assert data["usage"]["cache_read_input_tokens"] == 0
    assert data["usage"]["cache_creation_input_tokens"] == 0


async def test_anthropic_switchable_thinks_only_when_enabled(client: httpx.AsyncClient) -> None:
    body = {"model": "sim-switch", "max_tokens": 2000, "messages": user("hi")}
    data = (await client.post("/anthropic/v1/messages", json=body)).json()
    assert [b["type"] for b in data["content"]] == ["text"]


async def test_anthropic_stream_event_order(client: httpx.AsyncClient) -> None:
    events = await anthropic_events(
        client, model="sim-always", messages=user("hi [sim:tokens=9]"), max_tokens=2000
    )
    names = [n for n, _ in events]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    blocks = [(n, d) for n, d in events if n.startswith("content_block")]
    kinds = [d["content_block"]["type"] for n, d in blocks if n == "content_block_start"]
    assert kinds == ["thinking", "text"]
    thinking = [d for n, d in blocks if d.get("index") == 0]
    assert thinking[0]["type"] == "content_block_start"
    assert thinking[-2]["delta"]["type"] == "signature_delta"
    assert thinking[-1]["type"] == "content_block_stop"
    assert {d["delta"]["type"] for d in thinking[1:-2]} == {"thinking_delta"}
    text = "".join(
        d["delta"]["text"] for n, d in blocks if d.get("index") == 1 and n == "content_block_delta"
    )
    assert text.startswith("[simulated sim-always] ")
    assert events[-2][1]["delta"]["stop_reason"] == "end_turn"
    assert events[-2][1]["usage"]["output_tokens"] == 59
    assert events[0][1]["message"]["usage"]["input_tokens"] > 0


async def test_anthropic_max_tokens_during_thinking_stops_with_max_tokens(client: httpx.AsyncClient) -> None:
    events = await anthropic_events(client, model="sim-always", messages=user("hi"), max_tokens=20)
    kinds = [d["content_block"]["type"] for n, d in events if n == "content_block_start"]
    assert kinds == ["thinking"]
    assert events[-2][1]["delta"]["stop_reason"] == "max_tokens"


async def test_anthropic_tool_use_streams_input_json_deltas(client: httpx.AsyncClient) -> None:
    tools = [{"name": t["function"]["name"], "input_schema": t["function"]["parameters"]} for t in TOOLS]
    events = await anthropic_events(client, messages=user("[sim:tool_call=get_weather]"), tools=tools)
    start = next(d for n, d in events if n == "content_block_start")
    assert start["content_block"]["type"] == "tool_use" and start["content_block"]["name"] == "get_weather"
    partial = "".join(d["delta"]["partial_json"] for n, d in events if n == "content_block_delta")
    assert set(orjson.loads(partial)) == {"city", "days"}
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


async def test_anthropic_json_system_prompt_gets_json(client: httpx.AsyncClient) -> None:
    body = {"model": "sim-plain", "max_tokens": 500, "system": "Answer in JSON.", "messages": user("hi")}
    data = (await client.post("/anthropic/v1/messages", json=body)).json()
    assert orjson.loads(data["content"][0]["text"])["simulated"] == "sim-plain"


async def test_models_and_health_endpoints(client: httpx.AsyncClient) -> None:
    openai_models = (await client.get("/openai/v1/models")).json()
    assert {m["id"] for m in openai_models["data"]} == set(PROFILES)
    anthropic_models = (await client.get("/anthropic/v1/models")).json()
    assert anthropic_models["data"][0]["type"] == "model"
    assert (await client.get("/health")).json()["status"] == "ok"
