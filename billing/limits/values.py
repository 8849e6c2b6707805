"""Budgets and rate limits as values: what is configured per scope, what a request asks for, what it got."""

from __future__ import annotations

import calendar
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum

MINUTE_S = 60


class Scope(StrEnum):
    ORGANIZATION = "organization"
    PROJECT = "project"
    KEY = "key"

    @property
    def label(self) -> str:
        return "API key" if self is Scope.KEY else str(self)


class Counter(StrEnum):
    REQUESTS = "requests"  # per minute
    TOKENS = "tokens"  # per minute: prompt + max_tokens reserved, settled to the tokens used
    BUDGET = "budget"  # per calendar month (UTC), micro-dollars: worst case reserved, settled to cost_micros


@dataclass(frozen=True, slots=True)
class ScopeLimits:
    """What an admin set for one organization, project or key (None: no limit of that kind)."""

    scope: Scope
    scope_id: int
    monthly_budget_micros: int | None = None
    alert_percent: int = 80
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None

    def limit(self, counter: Counter) -> int | None:
        if counter is Counter.REQUESTS:
            return self.requests_per_minute
        if counter is Counter.TOKENS:
            return self.tokens_per_minute
        return self.monthly_budget_micros


@dataclass(frozen=True, slots=True)
class LimitsSnapshot:
    """Every configured scope, loaded with the routing snapshot (no query per request)."""

    scopes: Mapping[tuple[Scope, int], ScopeLimits] = field(default_factory=dict)

    def for_key(self, *, organization_id: int, project_id: int, key_id: int) -> tuple[ScopeLimits, ...]:
        """Return the limits that apply to a request made with this key: its organization's, project's, own."""
        found = (self.scopes.get((Scope.ORGANIZATION, organization_id)), self.scopes.get((Scope.PROJECT, project_id)),
                 self.scopes.get((Scope.KEY, key_id)))
        return tuple(limits for limits in found if limits is not None)


NO_LIMITS = LimitsSnapshot()


@dataclass(frozen=True, slots=True)
class Admission:
    """What a request asks of its limits, before any upstream call (once per request, never per attempt)."""

    limits: tuple[ScopeLimits, ...]
    tokens: int  # prompt tokens + max_tokens (the route's output limit when the request sets none)
    cost_micros: int  # billing.pricing.reservation_micros(...)
    now: float  # epoch seconds


@dataclass(frozen=True, slots=True)
class CounterSpec:
    """One shared counter a request touches: its key, the limit, what the request adds, when it resets."""

    key: str
    counter: Counter
    scope: Scope
    scope_id: int
    limit: int
    amount: int
    reset_at: float  # epoch seconds
    ttl_s: int  # how long the store keeps it
    alert_percent: int = 80

    def state(self, used: int) -> CounterState:
        return CounterState(self.counter, self.scope, self.scope_id, self.limit, used, self.reset_at, self.amount,
                            self.alert_percent)


@dataclass(frozen=True, slots=True)
class CounterState:
    counter: Counter
    scope: Scope
    scope_id: int
    limit: int
    used: int  # including this request when admitted; before it when refused
    reset_at: float
    requested: int
    alert_percent: int = 80

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.used)

    @property
    def alerting(self) -> bool:
        """Whether a budget has reached its alert threshold (e.g. 80% spent or reserved)."""
        return self.counter is Counter.BUDGET and self.used * 100 >= self.limit * self.alert_percent


@dataclass(frozen=True, slots=True)
class Reservation:
    """What an admitted request holds: settle it to the actual use once, or release it on failure."""

    tokens: tuple[tuple[str, int], ...]  # (counter key, tokens reserved)
    budget: tuple[tuple[str, int], ...]  # (counter key, micro-dollars reserved)


@dataclass(frozen=True, slots=True)
class Verdict:
    admitted: bool
    states: tuple[CounterState, ...] = ()
    refused: CounterState | None = None
    reservation: Reservation | None = None
    degraded: bool = False  # the counters could not be reached and the limiter fails open


ADMITTED_UNCOUNTED = Verdict(admitted=True)


def month_bounds(now: float) -> tuple[str, float]:
    """Return the month's key (YYYYMM, UTC) and when the next month starts (epoch seconds)."""
    moment = datetime.fromtimestamp(now, tz=UTC)
    days = calendar.monthrange(moment.year, moment.month)[1]
    start = moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    return f"{moment.year:04d}{moment.month:02d}", start.timestamp() + days * 86_400


def counter_specs(admission: Admission, prefix: str) -> list[CounterSpec]:
    """Return the counters a request touches, in a fixed order (scope, then kind) so that stores lock nothing."""
    minute = int(admission.now // MINUTE_S)
    minute_reset = (minute + 1) * MINUTE_S
    month, month_reset = month_bounds(admission.now)
    specs: list[CounterSpec] = []
    for limits in admission.limits:
        where = f"{limits.scope}:{limits.scope_id}"
        for counter, window, reset_at, amount in (
            (Counter.REQUESTS, str(minute), minute_reset, 1),
            (Counter.TOKENS, str(minute), minute_reset, admission.tokens),
            (Counter.BUDGET, month, month_reset, admission.cost_micros),
        ):
            limit = limits.limit(counter)
            if limit is None:
                continue
            # Minute windows live two minutes; a month's spend stays readable for 40 days after it ends.
            ttl = 2 * MINUTE_S if counter is not Counter.BUDGET else int(reset_at - admission.now) + 40 * 86_400
            specs.append(CounterSpec(f"{prefix}:{counter}:{where}:{window}", counter, limits.scope, limits.scope_id,
                                     limit, amount, reset_at, ttl, limits.alert_percent))
    return specs
