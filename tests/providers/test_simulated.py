"""The simulated upstream, over a real socket: both wire formats, per-model behaviour, directives."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from providers.simulated import DEFAULT_PROFILE, SimProfile, build_app, load_profiles, parse_directives
from providers.simulated.server import running_server
from tests.providers.conftest import make_profile

PROFILES = {
    "sim-plain": make_profile(),
    "sim-always": make_profile(reasoning="always_on", reasoning_tokens=50),
    "sim-switch": make_profile(reasoning="switchable", reasoning_tokens=30),
    "sim-fence": make_profile(json_in_fences=True),
    "sim-refuser": make_profile(refuses_on=("bioweapon",)),
    "sim-blind": make_profile(vision=False),
}


@pytest.fixture(scope="module")
def sim_url() -> Iterator[str]:
    with running_server(build_app(profiles=PROFILES, time_scale=0)) as url:
        yield url


@pytest.fixture
async def client(sim_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=sim_url, timeout=10) as c:
        yield c


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


async def chat(client: httpx.AsyncClient, **body: Any) -> httpx.Response:
    body.setdefault("model", "sim-plain")
    return await client.post("/openai/v1/chat/completions", json=body)


async def chat_chunks(client: httpx.AsyncClient, **body: Any) -> list[Any]:
    """Return the parsed `data:` payloads of a streamed OpenAI answer ("[DONE]" kept as a string)."""
    body.setdefault("model", "sim-plain")
    out: list[Any] = []
    async with client.stream("POST", "/openai/v1/chat/completions", json={**body, "stream": True}) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        async for line in r.aiter_lines():
            if line.startswith("data: "):
                data = line[6:]
                out.append(data if data == "[DONE]" else orjson.loads(data))
    return out


async def anthropic_events(client: httpx.AsyncClient, **body: Any) -> list[tuple[str, dict[str, Any]]]:
    body.setdefault("model", "sim-plain")
    body.setdefault("max_tokens", 1000)
    events: list[tuple[str, dict[str, Any]]] = []
    name = ""
    async with client.stream("POST", "/anthropic/v1/messages", json={**body, "stream": True}) as r:
        assert r.status_code == 200
        async for line in r.aiter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = orjson.loads(line[6:])
                assert data["type"] == name
                events.append((name, data))
    return events


async def wait_for_stats(client: httpx.AsyncClient, tag: str, key: str, value: int) -> dict[str, int]:
    deadline = time.monotonic() + 5
    while True:
        bucket = (await client.get("/stats")).json()["by_tag"].get(tag, {})
        if bucket.get(key) == value or time.monotonic() > deadline:
            return bucket
        await asyncio.sleep(0.02)


# -- OpenAI wire ------------------------------------------------------------------------------------


async def test_openai_non_streamed_has_the_chat_completion_shape(client: httpx.AsyncClient) -> None:
    r = await chat(client, messages=user("What is machine learning?"))
    assert r.status_code == 200
    data = r.json()
    assert data["object"] == "chat.completion"
    assert data["id"].startswith("chatcmpl-")
    assert data["model"] == "sim-plain"
    choice = data["choices"][0]
    assert choice["finish_reason"] == "stop"
    assert choice["message"]["role"] == "assistant"
    assert choice["message"]["content"].startswith("[simulated sim-plain] ")
    assert "reasoning_content" not in choice["message"]
    usage = data["usage"]
    assert usage["completion_tokens"] == 40
    assert usage["prompt_tokens"] > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage["completion_tokens_details"]["reasoning_tokens"] == 0


async def test_openai_stream_has_role_chunk_deltas_finish_usage_and_done(client: httpx.AsyncClient) -> None:
    chunks = await chat_chunks(
        client, messages=user("hello [sim:tokens=10]"), stream_options={"include_usage": True}
    )
    assert chunks[-1] == "[DONE]"
    first, *middle, finish, usage_chunk, _done = chunks
    assert first["object"] == "chat.completion.chunk"
    assert first["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    text = "".join(c["choices"][0]["delta"]["content"] for c in middle)
    assert text.startswith("[simulated sim-plain] ")
    assert len(middle) > 1  # streamed in several chunks
    assert finish["choices"][0]["finish_reason"] == "stop"
    assert usage_chunk["choices"] == []
    assert usage_chunk["usage"]["completion_tokens"] == 10
    assert all(c["usage"] is None for c in chunks[:-2])


async def test_openai_stream_without_include_usage_has_no_usage_chunk(client: httpx.AsyncClient) -> None:
    chunks = await chat_chunks(client, messages=user("hello"))
    assert all("usage" not in c for c in chunks[:-1])
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"


async def test_answers_are_deterministic_per_request(client: httpx.AsyncClient) -> None:
    a = (await chat(client, messages=user("same question"))).json()
    b = (await chat(client, messages=user("same question"))).json()
    c = (await chat(client, messages=user("another question"))).json()
    assert a["choices"][0]["message"]["content"] == b["choices"][0]["message"]["content"]
    assert a["choices"][0]["message"]["content"] != c["choices"][0]["message"]["content"]
    streamed = await chat_chunks(client, messages=user("same question"))
    text = "".join(ch["choices"][0]["delta"].get("content", "") for ch in streamed[:-1])
    assert text == a["choices"][0]["message"]["content"]


async def test_tokens_directive_sets_the_answer_length(client: httpx.AsyncClient) -> None:
    data = (await chat(client, messages=user("hi [sim:tokens=7]"))).json()
    assert data["usage"]["completion_tokens"] == 7


async def test_unknown_model_gets_the_default_profile(client: httpx.AsyncClient) -> None:
    data = (await chat(client, model="never-heard-of-it", messages=user("hi"))).json()
    assert data["choices"][0]["message"]["content"].startswith("[simulated never-heard-of-it] ")


async def test_missing_model_is_a_404_in_each_dialect(client: httpx.AsyncClient) -> None:
    r = await chat(client, model="missing-model", messages=user("hi"))
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "model_not_found"
    r = await client.post(
        "/anthropic/v1/messages", json={"model": "missing-model", "max_tokens": 10, "messages": user("hi")}
    )
    assert r.status_code == 404
    assert r.json() == {
        "type": "error",
        "error": {"type": "not_found_error", "message": "model: missing-model"},
    }


async def test_invalid_body_is_a_400(client: httpx.AsyncClient) -> None:
    r = await client.post("/openai/v1/chat/completions", content=b"{nope")
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "invalid_request_error"
    r = await chat(client, messages=[])
    assert r.status_code == 400


# -- reasoning --------------------------------------------------------------------------------------


async def test_reasoning_comes_before_the_answer_and_is_counted(client: httpx.AsyncClient) -> None:
    data = (await chat(client, model="sim-always", messages=user("think [sim:tokens=10]"))).json()
    message = data["choices"][0]["message"]
    assert message["reasoning_content"]
    assert message["content"].startswith("[simulated sim-always] ")
    assert data["usage"]["completion_tokens_details"]["reasoning_tokens"] == 50
    assert data["usage"]["completion_tokens"] == 60


async def test_reasoning_that_uses_up_max_tokens_ends_with_length_and_no_content(
    client: httpx.AsyncClient,
) -> None:
    data = (await chat(client, model="sim-always", messages=user("think"), max_tokens=30)).json()
    choice = data["choices"][0]
    assert choice["finish_reason"] == "length"
    assert choice["message"]["content"] is None
    assert choice["message"]["reasoning_content"]
    assert data["usage"]["completion_tokens"] == 30
    assert data["usage"]["completion_tokens_details"]["reasoning_tokens"] == 30


async def test_answer_is_cut_when_max_tokens_runs_out_after_reasoning(client: httpx.AsyncClient) -> None:
    data = (await chat(client, model="sim-always", messages=user("think"), max_completion_tokens=55)).json()
    choice = data["choices"][0]
    assert choice["finish_reason"] == "length"
    assert choice["message"]["content"].startswith("[simulated sim-always]")
    assert data["usage"]["completion_tokens"] == 55


async def test_reasoning_streams_as_reasoning_content_deltas(client: httpx.AsyncClient) -> None:
    chunks = await chat_chunks(client, model="sim-always", messages=user("think"), max_tokens=20)
    deltas = [c["choices"][0]["delta"] for c in chunks[1:-1]]
    assert any("reasoning_content" in d for d in deltas)
    assert not any(d.get("content") for d in deltas)
    assert chunks[-2]["choices"][0]["finish_reason"] == "length"


@pytest.mark.parametrize(
    "switch",
    [
        {"reasoning_effort": "none"},
        {"chat_template_kwargs": {"enable_thinking": False}},
        {"reasoning": {"enabled": False}},
        {"thinking": {"type": "disabled"}},
    ],
)
async def test_switchable_model_stops_thinking_when_switched_off(
    client: httpx.AsyncClient, switch: dict
) -> None:
    on = (await chat(client, model="sim-switch", messages=user("q"))).json()
    off = (await chat(client, model="sim-switch", messages=user("q"), **switch)).json()
    assert on["usage"]["completion_tokens_details"]["reasoning_tokens"] == 30
    assert "reasoning_content" not in off["choices"][0]["message"]
    assert off["usage"]["completion_tokens_details"]["reasoning_tokens"] == 0


async def test_always_on_model_ignores_the_switch(client: httpx.AsyncClient) -> None:
    data = (
        await chat(
            client,
            model="sim-always",
            messages=user("q"),
            reasoning_effort="none",
            chat_template_kwargs={"enable_thinking": False},
        )
    ).json()
    assert data["usage"]["completion_tokens_details"]["reasoning_tokens"] == 50


# -- structured output, refusals, tools -----------------------------------------------------------------


async def test_json_object_answer_is_a_json_document(client: httpx.AsyncClient) -> None:
    data = (await chat(client, messages=user("give JSON"), response_format={"type": "json_object"})).json()
    doc = orjson.loads(data["choices"][0]["message"]["content"])
    assert doc["simulated"] == "sim-plain"


async def test_json_schema_answer_fills_required_properties(client: httpx.AsyncClient) -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "kind": {"enum": ["a", "b"]},
            "optional": {"type": "string"},
        },
        "required": ["name", "age", "tags", "kind"],
    }
    fmt = {"type": "json_schema", "json_schema": {"name": "person", "schema": schema}}
    data = (await chat(client, messages=user("person"), response_format=fmt)).json()
    doc = orjson.loads(data["choices"][0]["message"]["content"])
    assert set(doc) == {"name", "age", "tags", "kind"}
    assert isinstance(doc["age"], int) and isinstance(doc["tags"], list) and doc["kind"] == "a"
    assert doc["name"].startswith("[simulated sim-plain]")


async def test_fenced_model_wraps_json_in_code_fences(client: httpx.AsyncClient) -> None:
    data = (
        await chat(client, model="sim-fence", messages=user("json"), response_format={"type": "json_object"})
    ).json()
    content = data["choices"][0]["message"]["content"]
    assert content.startswith("[simulated sim-fence] Here is the JSON:\n```json\n{")
    assert content.endswith("\n```")
    orjson.loads(content.split("```json\n", 1)[1].rsplit("\n```", 1)[0])


async def test_json_none_directive_answers_prose(client: httpx.AsyncClient) -> None:
    body = {"messages": user("json [sim:json=none]"), "response_format": {"type": "json_object"}}
    content = (await chat(client, **body)).json()["choices"][0]["message"]["content"]
    assert "{" not in content and content.startswith("[simulated sim-plain] ")


@pytest.mark.parametrize(
    ("model", "text"), [("sim-refuser", "how to make a Bioweapon"), ("sim-plain", "[sim:refuse]")]
)
async def test_refusal_ends_with_content_filter(client: httpx.AsyncClient, model: str, text: str) -> None:
    data = (await chat(client, model=model, messages=user(text))).json()
    assert data["choices"][0]["finish_reason"] == "content_filter"
    assert len(data["choices"][0]["message"]["content"]) < 60
    events = await anthropic_events(client, model=model, messages=user(text))
    assert events[-2][1]["delta"]["stop_reason"] == "refusal"


TOOLS = [
    {"type": "function", "function": {"name": "noop", "parameters": {"type": "object", "properties": {}}}},
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city", "days"],
            },
        },
    },
]


async def test_tool_call_directive_answers_with_a_tool_call(client: httpx.AsyncClient) -> None:
    data = (await chat(client, messages=user("weather? [sim:tool_call=get_weather]"), tools=TOOLS)).json()
    choice = data["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    call = choice["message"]["tool_calls"][0]
    assert call["id"].startswith("call_") and call["type"] == "function"
    assert call["function"]["name"] == "get_weather"
    assert set(orjson.loads(call["function"]["arguments"])) == {"city", "days"}
    first = (await chat(client, messages=user("[sim:tool_call]"), tools=TOOLS)).json()
    assert first["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "noop"


async def test_tool_call_streams_name_first_then_argument_fragments(client: httpx.AsyncClient) -> None:
    chunks = await chat_chunks(client, messages=user("[sim:tool_call=get_weather]"), tools=TOOLS)
    calls = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks[1:-2]]
    assert calls[0]["id"].startswith("call_")
    assert calls[0]["function"] == {"name": "get_weather", "arguments": ""}
    assert len(calls) > 2 and all(set(c) == {"index", "function"} for c in calls[1:])
    arguments = "".join(c["function"]["arguments"] for c in calls)
    assert set(orjson.loads(arguments)) == {"city", "days"}
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"


async def test_tool_result_is_answered_with_text(client: httpx.AsyncClient) -> None:
    messages = [
        *user("[sim:tool_call]"),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "noop", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
    ]
    data = (await chat(client, messages=messages, tools=TOOLS)).json()
    assert data["choices"][0]["finish_reason"] == "stop"
    assert data["choices"][0]["message"]["content"].startswith("[simulated ")


async def test_model_without_vision_refuses_images(client: httpx.AsyncClient) -> None:
    parts = [
        {"type": "text", "text": "what is this"},
        {"type": "image_url", "image_url": {"url": "http://x/y.png"}},
    ]
    r = await chat(client, model="sim-blind", messages=[{"role": "user", "content": parts}])
    assert r.status_code == 400


# -- failure directives -----------------------------------------------------------------------------


@pytest.mark.parametrize("status", [503, 429])
async def test_fail_directive_answers_the_status_with_the_dialect_error(
    client: httpx.AsyncClient, status: int
) -> None:
    r = await chat(client, messages=user(f"hi [sim:fail={status}]"))
    assert r.status_code == status
    assert r.json()["error"]["message"]
    r = await client.post(
        "/anthropic/v1/messages",
        json={"model": "m", "max_tokens": 5, "messages": user(f"[sim:fail={status}]")},
    )
    assert r.status_code == status
    assert r.json()["type"] == "error"
    assert r.json()["error"]["type"] == {503: "overloaded_error", 429: "rate_limit_error"}[status]


async def test_fail_at_model_fails_only_the_named_models(client: httpx.AsyncClient) -> None:
    text = "hi [sim:fail=503@sim-plain,sim-fence]"
    assert (await chat(client, model="sim-plain", messages=user(text))).status_code == 503
    assert (await chat(client, model="sim-fence", messages=user(text))).status_code == 503
    assert (await chat(client, model="sim-always", messages=user(text))).status_code == 200


async def test_directives_are_read_from_text_parts(client: httpx.AsyncClient) -> None:
    parts = [{"type": "text", "text": "hi"}, {"type": "text", "text": "[sim:fail=502]"}]
    assert (await chat(client, messages=[{"role": "user", "content": parts}])).status_code == 502


async def test_stall_delays_the_first_byte_in_real_time(client: httpx.AsyncClient) -> None:
    started = time.monotonic()
    r = await chat(client, messages=user("[sim:stall_ms=300@sim-plain]"))
    assert r.status_code == 200
    assert time.monotonic() - started >= 0.3
    started = time.monotonic()
    await chat(client, model="sim-fence", messages=user("[sim:stall_ms=3000@sim-plain]"))
    assert time.monotonic() - started < 1


async def test_fail_at_chunk_breaks_the_stream(client: httpx.AsyncClient) -> None:
    seen: list[str] = []
    with pytest.raises(httpx.RemoteProtocolError):
        async with client.stream(
            "POST",
            "/openai/v1/chat/completions",
            json={
                "model": "sim-plain",
                "stream": True,
                "messages": user("[sim:fail_at_chunk=2]"),
            },
        ) as r:
            async for line in r.aiter_lines():
                seen.append(line)
    contents = [line for line in seen if '"content":"' in line and '"role"' not in line]
    assert len(contents) == 2
    assert "data: [DONE]" not in seen


async def test_fail_at_chunk_non_streamed_is_a_500(client: httpx.AsyncClient) -> None:
    assert (await chat(client, messages=user("[sim:fail_at_chunk=1]"))).status_code == 500


async def test_malformed_directive_sends_a_body_that_is_not_json(client: httpx.AsyncClient) -> None:
    r = await chat(client, messages=user("[sim:malformed]"))
    assert r.status_code == 200
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(r.content)
    with pytest.raises(orjson.JSONDecodeError):
        await chat_chunks(client, messages=user("[sim:malformed]"))


async def test_client_closing_a_stream_is_counted_as_cancelled(client: httpx.AsyncClient) -> None:
    body = {"model": "sim-plain", "stream": True, "messages": user("[sim:idle_ms=5000][sim:tag=cancel-me]")}
    async with client.stream("POST", "/openai/v1/chat/completions", json=body) as r:
        async for line in r.aiter_lines():
            if '"content":"[simulated' in line:
                break
    bucket = await wait_for_stats(client, "cancel-me", "cancelled", 1)
    assert bucket == {"started": 1, "completed": 0, "cancelled": 1, "failed": 0}


async def test_stats_count_requests_by_tag_and_reset(client: httpx.AsyncClient) -> None:
    await chat(client, messages=user("[sim:tag=counted]"))
    await chat_chunks(client, messages=user("[sim:tag=counted]"))
    stats = (await client.get("/stats")).json()
    assert stats["by_tag"]["counted"] == {"started": 2, "completed": 2, "cancelled": 0, "failed": 0}
    assert stats["requests"] >= 2


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


# -- in-process ----------------------------------------------------------------------------------------


async def test_app_strips_its_mount_prefix() -> None:
    transport = httpx.ASGITransport(app=build_app(time_scale=0), root_path="/simulated")
    async with httpx.AsyncClient(transport=transport, base_url="http://sim") as c:
        assert (await c.get("/simulated/health")).status_code == 200


async def test_delays_follow_the_profile_and_time_scale() -> None:
    app = build_app(profiles={"slow": make_profile(ttft_ms=200, tokens_per_second=100.0)}, time_scale=0.5)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://sim") as c:
        started = time.monotonic()
        r = await c.post(
            "/openai/v1/chat/completions", json={"model": "slow", "messages": user("[sim:tokens=10]")}
        )
        elapsed = time.monotonic() - started
    assert r.status_code == 200
    assert 0.1 + 0.05 <= elapsed < 1.0  # (200 ms + 10 tokens at 100/s) x 0.5


def test_load_profiles_reads_the_catalog(tmp_path: Path) -> None:
    catalog = {
        "models": [
            {
                "id": "m1",
                "reasoning": "always_on",
                "typical_reasoning_tokens": 300,
                "capabilities": {"vision": False},
                "simulation": {
                    "ttft_ms": 200,
                    "tokens_per_second": 400,
                    "reasoning_tokens": 250,
                    "json_in_fences": True,
                    "refuses_on": ["Bioweapon"],
                },
            },
            {
                "id": "m2",
                "reasoning": "none",
                "capabilities": {},
                "simulation": {"ttft_ms": 10, "tokens_per_second": 50},
            },
        ]
    }
    path = tmp_path / "catalog.json"
    path.write_bytes(orjson.dumps(catalog))
    profiles = load_profiles(path)
    assert profiles["m1"] == SimProfile(200, 400.0, "always_on", 250, True, ("bioweapon",), False)
    assert profiles["m2"].reasoning == "none" and profiles["m2"].vision is True
    assert DEFAULT_PROFILE.reasoning == "none"


def test_parse_directives_applies_model_filters() -> None:
    d = parse_directives("x [sim:fail=503@a,b:v] [sim:stall_ms=40] [sim:tag=t1] [sim:tool_call=f]", "b:v")
    assert (d.fail, d.stall_ms, d.tag, d.tool_call) == (503, 40, "t1", "f")
    assert parse_directives("[sim:fail=503@a]", "b").fail is None
    assert parse_directives("[sim:fail=503@a]", "a:turbo").fail == 503
    assert parse_directives("no directives", "a").tag == "default"


# -- issue 16: forced tool_choice, plausible and prompt-shaped JSON ---------------------------------


@pytest.mark.parametrize(("choice", "name"), [
    ("required", "noop"),
    ({"type": "function", "function": {"name": "get_weather"}}, "get_weather"),
])
async def test_forced_tool_choice_answers_with_a_call(client: httpx.AsyncClient, choice: Any, name: str) -> None:
    data = (await chat(client, messages=user("what's the weather in Oslo?"), tools=TOOLS, tool_choice=choice)).json()
    assert data["choices"][0]["finish_reason"] == "tool_calls"
    assert data["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == name
    streamed = await chat_chunks(client, messages=user("weather?"), tools=TOOLS, tool_choice=choice)
    assert streamed[-2]["choices"][0]["finish_reason"] == "tool_calls"


async def test_auto_tool_choice_answers_with_text(client: httpx.AsyncClient) -> None:
    data = (await chat(client, messages=user("weather?"), tools=TOOLS, tool_choice="auto")).json()
    assert data["choices"][0]["finish_reason"] == "stop"


@pytest.mark.parametrize(("choice", "name"), [({"type": "any"}, "noop"), ({"type": "tool", "name": "get_weather"}, "get_weather")])
async def test_anthropic_forced_tool_choice_answers_with_a_call(client: httpx.AsyncClient, choice: Any, name: str) -> None:
    tools = [{"name": t["function"]["name"], "input_schema": t["function"]["parameters"]} for t in TOOLS]
    body = {"model": "sim-plain", "max_tokens": 500, "messages": user("weather?"), "tools": tools, "tool_choice": choice}
    data = (await client.post("/anthropic/v1/messages", json=body)).json()
    assert data["stop_reason"] == "tool_use"
    assert data["content"][-1]["name"] == name


PLAUSIBLE = {
    "type": "object",
    "$defs": {"Item": {"type": "object", "properties": {"sku": {"type": "string", "maxLength": 8},
                                                         "qty": {"type": "integer", "minimum": 1, "maximum": 5}},
                       "required": ["sku", "qty"]}},
    "properties": {
        "age": {"type": "integer", "minimum": 18, "maximum": 30},
        "score": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "count": {"type": "integer"},
        "when": {"type": "string", "format": "date"},
        "email": {"type": "string", "format": "email"},
        "level": {"type": "string", "enum": ["low", "high"]},
        "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}, "minItems": 2},
        "note": {"anyOf": [{"type": "string", "minLength": 40}, {"type": "null"}]},
    },
    "required": ["age", "score", "count", "when", "email", "level", "items", "note"],
}


async def test_json_schema_answer_is_valid_and_plausible(client: httpx.AsyncClient) -> None:
    import jsonschema

    fmt = {"type": "json_schema", "json_schema": {"name": "p", "schema": PLAUSIBLE}}
    for i in range(20):
        data = (await chat(client, messages=user(f"person {i}"), response_format=fmt)).json()
        doc = orjson.loads(data["choices"][0]["message"]["content"])
        jsonschema.validate(doc, PLAUSIBLE)
        assert abs(doc["count"]) <= 100
        assert date.fromisoformat(doc["when"]) and "@" in doc["email"]
        assert all(1 <= item["qty"] <= 5 for item in doc["items"])


@pytest.mark.parametrize("where", ["system", "user"])
async def test_json_object_answers_in_the_shape_the_prompt_gives(client: httpx.AsyncClient, where: str) -> None:
    import jsonschema

    schema = {"title": "Person", "type": "object", "properties": {"name": {"type": "string"},
                                                                  "age": {"type": "integer", "minimum": 0}},
              "required": ["name", "age"]}
    instruction = f"Answer in JSON matching this JSON schema:\n{orjson.dumps(schema).decode()}\nReturn an instance."
    messages = ([{"role": "system", "content": instruction}, *user("Jo is 31")] if where == "system"
                else user("Jo is 31. " + instruction))
    data = (await chat(client, messages=messages, response_format={"type": "json_object"})).json()
    doc = orjson.loads(data["choices"][0]["message"]["content"])
    jsonschema.validate(doc, schema)
    example = 'Reply as JSON like {"city": "Paris", "population": 2100000, "capital": true}.'
    data = (await chat(client, messages=user(example), response_format={"type": "json_object"})).json()
    doc = orjson.loads(data["choices"][0]["message"]["content"])
    assert set(doc) == {"city", "population", "capital"}
    assert isinstance(doc["population"], int) and isinstance(doc["capital"], bool)


# -- request log ------------------------------------------------------------------------------------


async def test_the_request_log_is_off_unless_asked_for(client: httpx.AsyncClient) -> None:
    await chat(client, messages=user("[sim:tag=unlogged] hi"))
    assert (await client.get("/debug/requests")).status_code == 404


async def test_the_request_log_keeps_the_last_bodies_received_in_each_wire() -> None:
    with running_server(build_app(profiles=PROFILES, time_scale=0, record_requests=2)) as url:
        async with httpx.AsyncClient(base_url=url, timeout=10) as c:
            await chat(c, messages=user("[sim:tag=first] one"), seed=1)
            await chat(c, messages=user("[sim:tag=logged] two"), seed=2)
            await c.post("/anthropic/v1/messages", json={"model": "sim-plain", "max_tokens": 9,
                                                         "messages": user("[sim:tag=logged] three")})
            everything = (await c.get("/debug/requests")).json()["data"]
            tagged = (await c.get("/debug/requests", params={"tag": "logged"})).json()["data"]
    # Bounded: the oldest is gone. Each entry is the body exactly as received.
    assert [(r["wire"], r["tag"]) for r in everything] == [("openai", "logged"), ("anthropic", "logged")]
    assert everything[0]["body"] == {"model": "sim-plain", "messages": user("[sim:tag=logged] two"), "seed": 2}
    assert everything[1]["body"]["max_tokens"] == 9
    assert tagged == everything
