"""The simulated upstream's failure directives."""

from __future__ import annotations

import time

import httpx
import orjson
import pytest

from tests.providers.simulated.conftest import (
    chat,
    chat_chunks,
    user,
    wait_for_stats,
)

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
