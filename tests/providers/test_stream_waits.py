"""The waits on a streamed upstream (providers.transport.timed_events), against the simulated upstream
in its own process: silence past the limit is a timeout; time the caller spends between events is not
silence; a cancellation from outside stays a cancellation."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from providers.base import CallOptions, UpstreamTarget
from providers.errors import FirstTokenTimeout, UpstreamTimeout
from providers.openai_compat import OpenAICompatibleAdapter


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=httpx.Timeout(10.0)) as c:
        yield c


def _target(simulated_url: str) -> UpstreamTarget:
    return UpstreamTarget("simulated", "openai", f"{simulated_url}/openai/v1", "meta-llama-3.3-70b", "sim-key")


def _options(*, first: float = 5.0, idle: float = 5.0, total: float = 30.0) -> CallOptions:
    return CallOptions(first_token_timeout=first, idle_timeout=idle, deadline=time.monotonic() + total)


def _body(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


async def test_silence_mid_stream_past_the_idle_limit_is_a_timeout(simulated_url: str,
                                                                   client: httpx.AsyncClient) -> None:
    received = []
    stream = OpenAICompatibleAdapter().stream(client, _target(simulated_url), _body("[sim:tokens=40] [sim:idle_ms=3000]"),
                                              _options(idle=0.2))
    started = time.monotonic()
    with pytest.raises(UpstreamTimeout, match="sent nothing for 0.2s"):
        async for chunk in stream:
            received.append(chunk)
    assert any(c["choices"] and c["choices"][0]["delta"].get("content") for c in received)
    assert time.monotonic() - started < 2.5  # ended by the limit, not by the upstream's 3 s of silence


async def test_a_short_silence_within_the_limit_is_not_a_timeout(simulated_url: str,
                                                                 client: httpx.AsyncClient) -> None:
    chunks = [c async for c in OpenAICompatibleAdapter().stream(
        client, _target(simulated_url), _body("[sim:tokens=40] [sim:idle_ms=150]"), _options(idle=1.0))]
    assert chunks[-1]["usage"]["completion_tokens"] == 40


async def test_time_the_caller_spends_between_events_is_not_upstream_silence(simulated_url: str,
                                                                           client: httpx.AsyncClient) -> None:
    """A slow client: the caller takes longer than the idle limit over each event (here a pause
    standing in for a slow write); only the waits on the upstream count."""
    count = 0
    async for _chunk in OpenAICompatibleAdapter().stream(
            client, _target(simulated_url), _body("[sim:tokens=12]"), _options(first=0.2, idle=0.2)):
        count += 1
        await asyncio.sleep(0.25)
    assert count >= 4


async def test_no_first_token_within_its_budget_is_a_first_token_timeout(simulated_url: str,
                                                                        client: httpx.AsyncClient) -> None:
    with pytest.raises(FirstTokenTimeout):
        async for _chunk in OpenAICompatibleAdapter().stream(
                client, _target(simulated_url), _body("[sim:stall_ms=3000]"), _options(first=0.2)):
            pass


async def test_a_cancellation_from_outside_during_a_wait_stays_a_cancellation(simulated_url: str,
                                                                            client: httpx.AsyncClient) -> None:
    got_first = asyncio.Event()

    async def consume() -> None:
        async for _chunk in OpenAICompatibleAdapter().stream(
                client, _target(simulated_url), _body("[sim:tokens=40] [sim:idle_ms=3000]"), _options(idle=0.3)):
            got_first.set()

    task = asyncio.ensure_future(consume())
    await asyncio.wait_for(got_first.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert task.cancelled()
