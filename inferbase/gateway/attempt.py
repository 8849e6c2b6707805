"""One attempt on one link of the chain: what is sent where, under which limits, and how it ended.

Every attempt's end goes through `attempt_result`, which also feeds the route's circuit breaker.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from providers.base import CallOptions, ProviderAdapter, UpstreamTarget
from providers.errors import CONNECTION_CAUSES
from providers.registry import adapter_for
from routing.decision import ChainLink

from .choices import upstream_calls
from .exchange import AttemptResult, Exchange
from .request import ChatRequest
from .shared import RouteHealth

if TYPE_CHECKING:
    from .state import AppState
from .timeouts import Budget, budget_for

# Outcomes that say the route itself is unwell (count toward its circuit breaker).
ROUTE_FAILURES = frozenset({*CONNECTION_CAUSES, "timeout", "first_token_timeout", "malformed_response",
                            "rate_limited", "upstream_error"})


@dataclass(frozen=True, slots=True)
class Attempt:
    """One link's call (n calls, for n choices its provider cannot make in one), ready to go."""

    link: ChainLink
    adapter: ProviderAdapter
    target: UpstreamTarget
    body: dict[str, Any]
    options: CallOptions
    budget: Budget
    n: int  # choices asked for
    calls: int  # upstream calls the attempt makes
    started: float
    health: RouteHealth  # the routes' circuit breaker, told how each call ended

    def result(self, outcome: str, *, status: int | None = None, error: str = "", timings: dict[str, int] | None = None,
               started: float | None = None, calls: int | None = None) -> AttemptResult:
        """Return how the attempt (or a call it made since `started`, a re-ask) ended, counted by the route's
        circuit breaker."""
        return attempt_result(self.health, self.link, outcome, self.started if started is None else started,
                              status=status, error=error, calls=self.calls if calls is None else calls, timings=timings)


def attempt_result(health: RouteHealth, link: ChainLink, outcome: str, started: float, *, status: int | None = None, error: str = "",
                   calls: int = 1, timings: dict[str, int] | None = None) -> AttemptResult:
    """Return an attempt's end as its record tells it; a success or a failure of the route counts toward its
    circuit breaker."""
    if outcome == "served":
        health.record(link.route.route_id, ok=True)
    elif outcome in ROUTE_FAILURES or outcome.startswith("http_5"):
        health.record(link.route.route_id, ok=False)
    return AttemptResult(link.route.route_id, link.model.id, outcome, int((time.perf_counter() - started) * 1000),
                         status, error, calls, **(timings or {}))


def thinks(link: ChainLink) -> bool:
    """Return True when this link's model will reason (so the thinking timeouts apply)."""
    if link.model.reasoning == "always_on":
        return True
    if link.model.reasoning == "none":
        return False
    return link.thinking is not False


def thinking_switch(link: ChainLink) -> bool | None:
    """Return the thinking switch sent to this link: on, off, or none (only a switchable model takes one)."""
    return link.thinking if link.model.reasoning == "switchable" else None


def upstream_target(link: ChainLink) -> UpstreamTarget:
    route = link.route
    return UpstreamTarget(
        provider=route.provider,
        dialect=route.dialect,
        base_url=route.base_url,
        upstream_model=route.upstream_model,
        api_key=link.api_key,
        thinking_switch=route.thinking_switch,
    )


def _declined(chat: ChatRequest, link: ChainLink) -> frozenset[str]:
    """Return the fields the link's model cannot take, whatever its provider: reasoning_effort on a model that
    never reasons (OpenAI and Groq refuse the request with it)."""
    if link.model.reasoning == "none" and "reasoning_effort" in chat.forward:
        return frozenset({"reasoning_effort"})
    return frozenset()


def _link_body(chat: ChatRequest, link: ChainLink, body: dict[str, Any]) -> dict[str, Any]:
    """Return the body for this link: the request's, without what the link's model declines."""
    declined = _declined(chat, link)
    return {k: v for k, v in body.items() if k not in declined} if declined else body


def dropped_for(chat: ChatRequest, link: ChainLink) -> tuple[str, ...]:
    """Return what the request reports as not forwarded on the link that served it."""
    adapter = adapter_for(link.route.dialect)
    skipped = adapter.not_forwarded(chat.forward, upstream_target(link), thinking_switch(link))
    return tuple(sorted({*chat.dropped_params, *_declined(chat, link), *skipped}))


def attempt_plan(state: AppState, ex: Exchange, link: ChainLink, body: dict[str, Any], *, stream: bool) -> Attempt | None:
    """Return the next attempt on `link`, under the spec's budgets; None when the request's first-token deadline
    has passed (recorded as skipped_deadline)."""
    assert ex.chat is not None and ex.routed is not None
    decision = ex.routed.decision
    budget = budget_for(stream=stream, thinks=thinks(link), first_token_ms=decision.first_token_timeout_ms,
                        deadline_ms=decision.total_deadline_ms)
    left = min(budget.first_token_s, budget.first_token_deadline_s - (time.perf_counter() - ex.started))
    if left <= 0:
        ex.attempts.append(attempt_result(state.route_health, link, "skipped_deadline", time.perf_counter()))
        return None
    options = CallOptions(
        first_token_timeout=max(0.001, left),
        idle_timeout=budget.idle_s,
        deadline=time.monotonic() + budget.attempt_max_s,
        thinking=thinking_switch(link),
    )
    return Attempt(link, adapter_for(link.route.dialect), upstream_target(link), _link_body(ex.chat, link, body),
                   options, budget, ex.chat.n, upstream_calls(ex.chat.n, link), time.perf_counter(), state.route_health)
