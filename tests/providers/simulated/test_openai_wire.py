"""The simulated upstream's OpenAI wire: the chat.completion and its stream, and reasoning."""

from __future__ import annotations

import httpx
import pytest

from tests.providers.simulated.conftest import (
    chat,
    chat_chunks,
    user,
)

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
