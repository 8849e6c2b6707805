"""Shared caches and the per-route circuit breaker."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest
from django.conf import settings

from inferbase.accounts.selectors import KeyInfo
from inferbase.api.validation import chat_request_parse
from inferbase.gateway import route
from inferbase.gateway.errors import NotRouted
from inferbase.gateway.exchange import Exchange
from inferbase.gateway.shared import RouteHealth, SharedLRU, SharedRedis
from inferbase.gateway.state import AppState, _snapshot_load
from routing.engine.filters import utc_text
from routing.services import catalog_load

KEY = KeyInfo(key_id=1, project_id=1, organization_id=1, plan="pro", markup_bps=500, policy_id=None, active=True)


def test_route_rests_after_consecutive_failures() -> None:
    health = RouteHealth(threshold=3, rest_seconds=60)
    for _ in range(2):
        health.record("groq/m", ok=False)
    assert health.resting() == {}
    before = time.time()
    health.record("groq/m", ok=False)
    assert list(health.resting()) == ["groq/m"]
    assert before + 60 <= health.resting()["groq/m"] <= time.time() + 60


def test_a_success_resets_the_failure_count() -> None:
    health = RouteHealth(threshold=2, rest_seconds=60)
    health.record("groq/m", ok=False)
    health.record("groq/m", ok=True)
    health.record("groq/m", ok=False)
    assert health.resting() == {}


def test_a_rested_route_comes_back() -> None:
    health = RouteHealth(threshold=1, rest_seconds=0)
    health.record("groq/m", ok=False)
    assert health.resting() == {}


async def test_shared_lru_keeps_values_in_process_without_redis() -> None:
    cache = SharedLRU("t", size=2, ttl_seconds=60, redis=SharedRedis("", "t"))
    cache.put("a", {"x": 1})
    cache.put("b", {"x": 2})
    cache.put("c", {"x": 3})
    assert await cache.get("a") is None  # evicted: the LRU is bounded
    assert await cache.get("c") == {"x": 3}


@pytest.mark.django_db
def test_routing_skips_a_resting_route() -> None:
    catalog_load(catalog_path=Path(settings.INFERBASE_CATALOG_PATH), evidence_path=Path(settings.INFERBASE_EVIDENCE_PATH))
    snapshot = _snapshot_load("test")
    health = RouteHealth(threshold=1, rest_seconds=60)
    health.record("simulated/meta-llama-3.3-70b", ok=False)
    state = dataclasses.replace(AppState.from_settings(), route_health=health)
    chat = chat_request_parse({"model": "meta-llama-3.3-70b", "messages": [{"role": "user", "content": "hi"}]})
    ex = Exchange(request_id="req-1", key=KEY, chat=chat)
    with pytest.raises(NotRouted) as raised:
        route.route_request(state, ex, snapshot)
    assert raised.value.status == 503
    until = utc_text(health.resting()["simulated/meta-llama-3.3-70b"])
    resting = f"resting after repeated failures (simulated/meta-llama-3.3-70b until {until})"
    # The message names the resting route, not only the real providers' missing credentials.
    assert raised.value.message == (
        f"meta-llama-3.3-70b has no servable route: it lacks a provider credential, or has routes {resting}.")
    assert ex.routed is None
    steps, sentences = raised.value.filter_trail, raised.value.filter_trail_text
    assert steps[-1] == {"step": "servable", "in": 1, "out": 0,
                         "resting_until": {"simulated/meta-llama-3.3-70b": until}}
    assert sentences[-1] == (
        f"0 of 1 model have a servable route; it lacks a provider credential, or has routes {resting}.")


@pytest.mark.skipif(not settings.REDIS_URL, reason="needs REDIS_URL (CI's second run sets it)")
async def test_a_burst_of_200_reads_in_one_process_finds_every_shared_value() -> None:
    import asyncio
    import uuid

    name = f"t-{uuid.uuid4().hex[:8]}"
    redis = [SharedRedis(settings.REDIS_URL, "t"), SharedRedis(settings.REDIS_URL, "t")]
    writer = SharedLRU(name, size=500, ttl_seconds=60, redis=redis[0])
    reader = SharedLRU(name, size=500, ttl_seconds=60, redis=redis[1])  # nothing in its own memory
    try:
        for n in range(200):
            await writer._write(redis[0].client(), f"k{n}", {"n": n})  # awaited: in Redis before the reads
        # redis-py's default pool raised "Too many connections" past 100 calls at once: those reads were misses.
        found = await asyncio.gather(*(reader.get(f"k{n}") for n in range(200)))
        assert found == [{"n": n} for n in range(200)]
    finally:
        for each in redis:
            await each.aclose()


@pytest.mark.skipif(not settings.REDIS_URL, reason="needs REDIS_URL (CI's second run sets it)")
async def test_shared_lru_shares_values_across_processes_through_redis() -> None:
    import asyncio
    import uuid

    name = f"t-{uuid.uuid4().hex[:8]}"
    redis = [SharedRedis(settings.REDIS_URL, "t"), SharedRedis(settings.REDIS_URL, "t")]
    writer = SharedLRU(name, size=10, ttl_seconds=60, redis=redis[0])  # one process...
    reader = SharedLRU(name, size=10, ttl_seconds=60, redis=redis[1])  # ...and another: nothing in its own memory
    writer.put("k", {"task": "coding"})

    async def read() -> object:
        deadline = time.monotonic() + 5  # the write goes to Redis in the background
        while True:
            value = await reader.get("k")
            if value is not None or time.monotonic() > deadline:
                return value
            await asyncio.sleep(0.01)

    try:
        assert await read() == {"task": "coding"}
    finally:
        for each in redis:
            await each.aclose()


def test_decision_copies_made_together_are_each_readable_until_forgotten(tmp_path: Path) -> None:
    import asyncio

    from inferbase.gateway.decisions import SharedDecisions

    decisions = SharedDecisions(SharedRedis("", "test"), tmp_path / "decisions", 60)
    ids = [f"req-{i:016x}" for i in range(3)]

    async def copy_all() -> None:  # made in one turn of the loop: written as one group
        await asyncio.gather(*(decisions.put(rid, 7, {"request_id": rid, "n": i}) for i, rid in enumerate(ids)))

    asyncio.run(copy_all())
    assert [decisions.get(rid) for rid in ids] == [(7, {"request_id": rid, "n": i}) for i, rid in enumerate(ids)]
    assert sorted(p.name for p in (tmp_path / "decisions").iterdir()) == [f"{rid}.json" for rid in ids]
    decisions.forget(ids[:1])
    assert decisions.get(ids[0]) is None
    assert decisions.get(ids[1]) == (7, {"request_id": ids[1], "n": 1})
    # A copy written by an earlier version, one per file, still reads.
    (tmp_path / "decisions" / "req-00000000000000ff.json").write_bytes(
        b'{"organization_id": 8, "decision": {"x": 1}}')
    assert decisions.get("req-00000000000000ff") == (8, {"x": 1})
