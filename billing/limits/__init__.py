"""Budgets and rate limits per organization, project and key: reserve before the call, settle after.

Build one `Limiter` per process with `limiter_build(...)`; per request: `Admission` -> `admit` ->
`limit_headers` / `limit_refusal` -> `settle` or `release`. See docs/billing.md, "Wiring".
"""

from __future__ import annotations

from .headers import BUDGET_CODE, RATE_LIMIT_CODE, LimitRefusal, limit_headers, limit_refusal, reset_duration
from .limiter import Limiter, LimitsUnavailable
from .store import CounterStore, MemoryCounterStore, RedisCounterStore
from .values import (
    NO_LIMITS,
    Admission,
    Counter,
    CounterState,
    LimitsSnapshot,
    Reservation,
    Scope,
    ScopeLimits,
    Verdict,
    month_bounds,
)


def limiter_build(*, redis_url: str, prefix: str, fail_open: bool, timeout_s: float) -> Limiter:
    """Return the process's limiter: counters in Redis when a URL is given, else in this process."""
    store: CounterStore = RedisCounterStore(redis_url, timeout_s=timeout_s) if redis_url else MemoryCounterStore()
    return Limiter(store, prefix=prefix, fail_open=fail_open)


__all__ = [
    "BUDGET_CODE", "NO_LIMITS", "RATE_LIMIT_CODE", "Admission", "Counter", "CounterState", "CounterStore",
    "LimitRefusal", "Limiter", "LimitsSnapshot", "LimitsUnavailable", "MemoryCounterStore", "RedisCounterStore",
    "Reservation", "Scope", "ScopeLimits", "Verdict", "limit_headers", "limit_refusal", "limiter_build",
    "month_bounds", "reset_duration",
]
