"""Budgets and rate limits: admission, settle and release, headers and 429s, Redis under concurrency."""

from __future__ import annotations

import asyncio
import os
import threading
import uuid
from datetime import UTC, datetime

import pytest

from billing.limits import (
    Admission,
    Limiter,
    LimitsSnapshot,
    LimitsUnavailable,
    MemoryCounterStore,
    RedisCounterStore,
    Scope,
    ScopeLimits,
    limit_headers,
    limit_refusal,
    month_bounds,
    reset_duration,
)
from billing.models import Budget, RateLimit
from billing.selectors import limits_snapshot_load

NOW = datetime(2026, 11, 30, 12, 0, 15, tzinfo=UTC).timestamp()
ORG = ScopeLimits(Scope.ORGANIZATION, 1, monthly_budget_micros=1_000, requests_per_minute=100, tokens_per_minute=10_000)
KEY = ScopeLimits(Scope.KEY, 7, requests_per_minute=2)


def _admission(*limits: ScopeLimits, tokens: int = 100, cost: int = 300, now: float = NOW) -> Admission:
    return Admission(limits=limits, tokens=tokens, cost_micros=cost, now=now)


def _limiter(store: object | None = None, *, fail_open: bool = False) -> Limiter:
    return Limiter(store or MemoryCounterStore(), prefix="t", fail_open=fail_open)  # type: ignore[arg-type]


async def test_a_request_within_its_limits_is_admitted_and_counted_once_per_scope() -> None:
    limiter = _limiter()
    verdict = await limiter.admit(_admission(ORG, KEY))
    assert verdict.admitted and verdict.refused is None
    used = {(s.scope, s.counter): s.used for s in verdict.states}
    assert used == {(Scope.ORGANIZATION, "requests"): 1, (Scope.ORGANIZATION, "tokens"): 100,
                    (Scope.ORGANIZATION, "budget"): 300, (Scope.KEY, "requests"): 1}


async def test_the_tightest_limit_refuses_and_nothing_is_counted() -> None:
    store = MemoryCounterStore()
    limiter = _limiter(store)
    assert (await limiter.admit(_admission(ORG, KEY))).admitted
    assert (await limiter.admit(_admission(ORG, KEY))).admitted
    refused = await limiter.admit(_admission(ORG, KEY))
    assert not refused.admitted and refused.reservation is None
    assert (refused.refused.scope, refused.refused.counter, refused.refused.used) == (Scope.KEY, "requests", 2)
    org_budget = next(s for s in refused.states if s.scope is Scope.ORGANIZATION and s.counter == "budget")
    assert org_budget.used == 600  # the refused request reserved nothing


async def test_a_budget_is_never_reserved_past_its_limit() -> None:
    limiter = _limiter()
    admitted = [await limiter.admit(_admission(ORG, cost=300)) for _ in range(4)]
    assert [v.admitted for v in admitted] == [True, True, True, False]
    assert admitted[3].refused.counter == "budget"


async def test_settle_replaces_the_reservation_by_the_actual_use_and_release_gives_it_back() -> None:
    store = MemoryCounterStore()
    limiter = _limiter(store)
    first = await limiter.admit(_admission(ORG, tokens=500, cost=900))
    await limiter.settle(first.reservation, tokens=120, cost_micros=37)
    second = await limiter.admit(_admission(ORG, tokens=500, cost=900))
    assert second.admitted  # 37 + 900 <= 1000: the first reservation was settled down
    await limiter.release(second.reservation)
    third = await limiter.admit(_admission(ORG, tokens=1, cost=1))
    state = {s.counter: s.used for s in third.states}
    assert state == {"requests": 3, "tokens": 120 + 1, "budget": 37 + 1}


async def test_a_request_is_admitted_once_whatever_its_attempts() -> None:
    # A fallback or a re-ask is part of one request: one admission, one settle with the total.
    limiter = _limiter()
    verdict = await limiter.admit(_admission(ORG, tokens=300, cost=600))
    await limiter.settle(verdict.reservation, tokens=250 + 260, cost_micros=210 + 220)
    after = await limiter.admit(_admission(ORG, tokens=0, cost=0))
    assert {s.counter: s.used for s in after.states} == {"requests": 2, "tokens": 510, "budget": 430}


async def test_minute_windows_reset_and_the_month_does_not() -> None:
    limiter = _limiter()
    assert (await limiter.admit(_admission(KEY))).admitted
    assert (await limiter.admit(_admission(KEY))).admitted
    assert not (await limiter.admit(_admission(KEY))).admitted
    assert (await limiter.admit(_admission(KEY, now=NOW + 60))).admitted


def test_headers_follow_openai_and_show_the_budget() -> None:
    org = ScopeLimits(Scope.ORGANIZATION, 1, monthly_budget_micros=1_000, alert_percent=50, requests_per_minute=10,
                      tokens_per_minute=5_000)
    verdict = asyncio.run(_limiter().admit(_admission(org, KEY, tokens=1_200, cost=600)))
    assert limit_headers(verdict, now=NOW) == {
        "x-ratelimit-limit-requests": "2", "x-ratelimit-remaining-requests": "1", "x-ratelimit-reset-requests": "45s",
        "x-ratelimit-limit-tokens": "5000", "x-ratelimit-remaining-tokens": "3800", "x-ratelimit-reset-tokens": "45s",
        "x-inferbase-budget-remaining-micros": "400", "x-inferbase-budget-alert": "organization 60%",
    }


def test_reset_durations_read_like_openais() -> None:
    assert [reset_duration(s) for s in (0.02, 1, 44.2, 60, 360, 3723)] == ["20ms", "1s", "45s", "1m0s", "6m0s", "1h2m3s"]


async def test_a_rate_limit_refusal_is_a_429_with_retry_after() -> None:
    limiter = _limiter()
    for _ in range(2):
        await limiter.admit(_admission(KEY))
    refusal = limit_refusal(await limiter.admit(_admission(KEY)), now=NOW)
    assert (refusal.status, refusal.code, refusal.type) == (429, "rate_limit_exceeded", "rate_limit_error")
    assert refusal.message == ("Rate limit reached for requests per minute on this API key: limit 2, used 2. "
                               "Try again in 45s.")
    assert refusal.headers["retry-after"] == "45"
    assert refusal.headers["x-ratelimit-remaining-requests"] == "0"


async def test_a_budget_refusal_names_the_budget_and_when_it_resets() -> None:
    project = ScopeLimits(Scope.PROJECT, 3, monthly_budget_micros=50_000_000)
    limiter = _limiter()
    await limiter.admit(_admission(project, cost=49_990_000))
    refusal = limit_refusal(await limiter.admit(_admission(project, cost=20_000)), now=NOW)
    assert (refusal.status, refusal.code) == (429, "budget_exceeded")
    assert refusal.message == ("The monthly budget of this project ($50.00) would be exceeded: $49.99 is spent or "
                               "reserved and this request may cost up to $0.02. The budget resets on 2026-12-01 00:00 UTC.")
    assert refusal.headers["retry-after"] == str(int(datetime(2026, 12, 1, tzinfo=UTC).timestamp() - NOW))
    assert refusal.headers["x-inferbase-budget-remaining-micros"] == "10000"


def test_month_bounds_roll_over_the_year() -> None:
    assert month_bounds(datetime(2026, 12, 31, 23, 59, tzinfo=UTC).timestamp()) == (
        "202612", datetime(2027, 1, 1, tzinfo=UTC).timestamp())


async def test_no_limits_means_nothing_to_count() -> None:
    verdict = await _limiter().admit(_admission())
    assert verdict.admitted and verdict.states == () and limit_headers(verdict, now=NOW) == {}


async def test_an_unreachable_redis_fails_closed_or_open_as_configured() -> None:
    down = RedisCounterStore("redis://127.0.0.1:1/0", timeout_s=0.2)
    with pytest.raises(LimitsUnavailable):
        await _limiter(down).admit(_admission(ORG))
    verdict = await _limiter(down, fail_open=True).admit(_admission(ORG))
    assert verdict.admitted and verdict.degraded and verdict.reservation is None
    await _limiter(down, fail_open=True).settle(None, tokens=1, cost_micros=1)  # nothing to settle, no error


@pytest.mark.django_db
def test_the_snapshot_holds_each_scopes_limits() -> None:
    Budget.objects.create(scope="organization", scope_id=1, monthly_micros=5_000_000, alert_percent=90)
    RateLimit.objects.create(scope="organization", scope_id=1, requests_per_minute=60)
    RateLimit.objects.create(scope="key", scope_id=7, tokens_per_minute=1_000)
    Budget.objects.create(scope="project", scope_id=99, monthly_micros=1)  # another project
    snapshot = limits_snapshot_load()
    assert snapshot.for_key(organization_id=1, project_id=2, key_id=7) == (
        ScopeLimits(Scope.ORGANIZATION, 1, monthly_budget_micros=5_000_000, alert_percent=90, requests_per_minute=60),
        ScopeLimits(Scope.KEY, 7, tokens_per_minute=1_000),
    )
    assert LimitsSnapshot().for_key(organization_id=1, project_id=2, key_id=7) == ()


REDIS_URL = os.environ.get("REDIS_URL", "")
needs_redis = pytest.mark.skipif(not REDIS_URL, reason="REDIS_URL is not set: the shared counters need a real Redis "
                                                       "(CI sets it in its second run)")


async def _race(limiter_for_thread, admissions_per_thread: int, threads: int, budget: int, cost: int):  # type: ignore[no-untyped-def]
    """Run `threads` event loops, each with its own limiter and connections, admitting concurrently."""
    results: list[tuple[bool, int]] = []
    lock = threading.Lock()

    def run() -> None:
        async def one(limiter: Limiter) -> None:
            verdict = await limiter.admit(_admission(ScopeLimits(Scope.PROJECT, 5, monthly_budget_micros=budget),
                                                     tokens=10, cost=cost))
            # Settled at the reservation: the budget fills with exactly what was admitted.
            actual = cost if verdict.admitted else 0
            if verdict.admitted:
                await limiter.settle(verdict.reservation, tokens=5, cost_micros=actual)
            with lock:
                results.append((verdict.admitted, actual))

        async def main() -> None:
            limiter, close = limiter_for_thread()
            await asyncio.gather(*(one(limiter) for _ in range(admissions_per_thread)))
            await close()

        asyncio.run(main())

    workers = [threading.Thread(target=run) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        await asyncio.to_thread(worker.join)
    return results


@needs_redis
async def test_200_concurrent_reservations_near_the_budget_never_end_above_it() -> None:
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    budget, cost = 10_000, 70  # room for 142 reservations of the 200

    def limiter_for_thread():  # type: ignore[no-untyped-def]
        store = RedisCounterStore(REDIS_URL, timeout_s=5.0)
        return Limiter(store, prefix=prefix, fail_open=False), store.aclose

    results = await _race(limiter_for_thread, 50, 4, budget, cost)
    admitted = [actual for ok, actual in results if ok]
    assert len(results) == 200
    assert len(admitted) == budget // cost  # every reservation that fitted, and no more
    store = RedisCounterStore(REDIS_URL, timeout_s=5.0)
    month, _ = month_bounds(NOW)
    key = f"{prefix}:limits:budget:project:5:{month}"
    [spent] = await store.get([key])
    await store.aclose()
    import redis

    with redis.Redis.from_url(REDIS_URL) as client:
        client.delete(key)
    assert spent == sum(admitted) <= budget


@needs_redis
async def test_a_burst_of_200_admissions_on_one_event_loop_is_counted_not_refused() -> None:
    # One gateway process takes a burst of requests at once: each admission waits for one of the store's few
    # connections (within its timeout) rather than failing as "limits unavailable" (a 503 when failing closed).
    store = RedisCounterStore(REDIS_URL, timeout_s=1.0)
    limiter = Limiter(store, prefix=f"test-{uuid.uuid4().hex[:8]}", fail_open=False)
    try:
        verdicts = await asyncio.gather(*(limiter.admit(_admission(ScopeLimits(Scope.PROJECT, 5, requests_per_minute=150)))
                                          for _ in range(200)))
    finally:
        await store.aclose()
    assert sum(v.admitted for v in verdicts) == 150  # counted in Redis, in full: the rest over the limit


async def test_200_concurrent_reservations_in_memory_never_end_above_the_budget() -> None:
    store = MemoryCounterStore()
    limiter = Limiter(store, prefix="mem", fail_open=False)
    budget, cost = 10_000, 70

    async def one() -> tuple[bool, int]:
        verdict = await limiter.admit(_admission(ScopeLimits(Scope.PROJECT, 5, monthly_budget_micros=budget), cost=cost))
        await asyncio.sleep(0)
        if verdict.admitted:
            await limiter.settle(verdict.reservation, tokens=1, cost_micros=cost - 1)
        return verdict.admitted, cost - 1

    results = await asyncio.gather(*(one() for _ in range(200)))
    assert sum(ok for ok, _ in results) >= budget // cost
    month, _ = month_bounds(NOW)
    [spent] = await store.get([f"mem:limits:budget:project:5:{month}"])
    assert spent <= budget


@pytest.mark.django_db
def test_an_edit_of_a_budget_or_rate_limit_marks_the_snapshot_stale() -> None:
    from django.core.cache import cache

    from routing.snapshot import VERSION_KEY

    before = cache.get(VERSION_KEY)
    budget = Budget.objects.create(scope="project", scope_id=3, monthly_micros=10)
    after_budget = cache.get(VERSION_KEY)
    RateLimit.objects.create(scope="key", scope_id=3, requests_per_minute=5)
    after_limit = cache.get(VERSION_KEY)
    budget.delete()
    assert len({before, after_budget, after_limit, cache.get(VERSION_KEY)}) == 4


def test_the_process_limiter_counts_in_memory_without_redis(settings) -> None:  # type: ignore[no-untyped-def]
    from inferbase.gateway.state import AppState

    settings.REDIS_URL = ""
    assert isinstance(AppState.from_settings().limiter._store, MemoryCounterStore)
