"""What a response says about limits: OpenAI's x-ratelimit-* headers, the budget headers, and the 429."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime

from .values import Counter, CounterState, Verdict

REFUSED_STATUS = 429
RATE_LIMIT_CODE = "rate_limit_exceeded"
BUDGET_CODE = "budget_exceeded"


def reset_duration(seconds: float) -> str:
    """Return a wait in OpenAI's x-ratelimit-reset-* format: 20ms, 1s, 6m0s, 1h2m3s."""
    if seconds < 1:
        return f"{max(0, math.ceil(seconds * 1000))}ms"
    total = math.ceil(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"


def _tightest(states: tuple[CounterState, ...], counter: Counter) -> CounterState | None:
    """Return the state of this kind with the least left (the one a client must pace itself by)."""
    mine = [s for s in states if s.counter is counter]
    return min(mine, key=lambda s: (s.remaining, s.limit), default=None)


def limit_headers(verdict: Verdict, *, now: float) -> dict[str, str]:
    """Return the response headers for a verdict: x-ratelimit-{limit,remaining,reset}-{requests,tokens} (the
    tightest scope of each kind), x-inferbase-budget-remaining-micros (the tightest budget) and
    x-inferbase-budget-alert when a budget has passed its alert threshold; plus Retry-After on a refusal."""
    headers: dict[str, str] = {}
    for counter in (Counter.REQUESTS, Counter.TOKENS):
        state = _tightest(verdict.states, counter)
        if state is not None:
            headers[f"x-ratelimit-limit-{counter}"] = str(state.limit)
            headers[f"x-ratelimit-remaining-{counter}"] = str(state.remaining)
            headers[f"x-ratelimit-reset-{counter}"] = reset_duration(state.reset_at - now)
    budget = _tightest(verdict.states, Counter.BUDGET)
    if budget is not None:
        headers["x-inferbase-budget-remaining-micros"] = str(budget.remaining)
    alerts = [s for s in verdict.states if s.alerting]
    if alerts:
        headers["x-inferbase-budget-alert"] = ", ".join(
            f"{s.scope.label} {s.used * 100 // s.limit if s.limit else 100}%" for s in alerts)
    if verdict.refused is not None:
        headers["retry-after"] = str(max(1, math.ceil(verdict.refused.reset_at - now)))
    return headers


@dataclass(frozen=True, slots=True)
class LimitRefusal:
    """The 429 a refused request gets: envelope fields and headers (Retry-After included)."""

    status: int
    code: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)
    type: str = "rate_limit_error"
    param: str | None = None


def _usd(micros: int) -> str:
    return f"${micros / 1_000_000:,.2f}"


def limit_refusal(verdict: Verdict, *, now: float) -> LimitRefusal:
    """Return the 429 for a refused verdict: which limit of which scope, and when it resets."""
    state = verdict.refused
    if state is None:
        raise ValueError("the verdict admitted the request")
    headers = limit_headers(verdict, now=now)
    scope = f"this {state.scope.label}"
    if state.counter is Counter.BUDGET:
        resets = datetime.fromtimestamp(state.reset_at, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
        message = (f"The monthly budget of {scope} ({_usd(state.limit)}) would be exceeded: {_usd(state.used)} is "
                   f"spent or reserved and this request may cost up to {_usd(state.requested)}. "
                   f"The budget resets on {resets}.")
        return LimitRefusal(REFUSED_STATUS, BUDGET_CODE, message, headers)
    wait = reset_duration(state.reset_at - now)
    unit = "requests per minute" if state.counter is Counter.REQUESTS else "tokens per minute"
    asked = "" if state.counter is Counter.REQUESTS else f", requested {state.requested}"
    message = (f"Rate limit reached for {unit} on {scope}: limit {state.limit}, used {state.used}{asked}. "
               f"Try again in {wait}.")
    return LimitRefusal(REFUSED_STATUS, RATE_LIMIT_CODE, message, headers)
