"""Budgets and rate limits on the request path (docs/billing.md, "Wiring"): admit once after routing, before any
upstream call; settle to the request's cost once it is answered, or release what it reserved.

A key none of whose scopes has a limit costs three dict lookups and nothing else.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.conf import settings

from billing.guardrails import Guardrails
from billing.limits import (
    NO_LIMITS,
    Admission,
    Limiter,
    LimitsSnapshot,
    LimitsUnavailable,
    Reservation,
    limit_headers,
    limit_refusal,
    limiter_build,
)
from billing.pricing import Price, ReservationLink, reservation_micros

from .errors import ApiError
from .exchange import Exchange

if TYPE_CHECKING:
    from .state import AppState


@dataclass(frozen=True, slots=True)
class BillingSnapshot:
    """What billing needs per request, loaded with the routing snapshot (no query per request)."""

    limits: LimitsSnapshot = NO_LIMITS
    guardrails: Mapping[int | None, Guardrails] = field(default_factory=dict)  # per routing policy with checks


NO_BILLING = BillingSnapshot()


class LimitRefused(ApiError):
    """A request over a budget or rate limit: a 429 whose headers say the limits and when to retry."""

    def __init__(self, status: int, message: str, *, code: str, type: str, headers: dict[str, str]) -> None:
        super().__init__(status, message, code=code, type=type)
        self.headers = headers


def limiter_from_settings() -> Limiter:
    """Return a limiter over the configured counters: Redis when REDIS_URL is set, in-process otherwise."""
    return limiter_build(redis_url=settings.REDIS_URL, prefix=settings.INFERBASE_CACHE_PREFIX,
                         fail_open=settings.INFERBASE_LIMITS_FAIL_OPEN,
                         timeout_s=settings.INFERBASE_LIMITS_TIMEOUT_MS / 1000)


def _admission(ex: Exchange, limits: tuple[Any, ...], guardrail_micros: int) -> Admission:
    """Return what the request reserves: its tokens and worst-case cost at its chain's dearest link."""
    assert ex.chat is not None and ex.key is not None and ex.routed is not None
    chat, key, decision = ex.chat, ex.key, ex.routed.decision
    links = [ReservationLink(Price(link.route.input_micros_per_mtok, link.route.output_micros_per_mtok,
                                   link.route.cached_input_micros_per_mtok),
                             max_output_tokens=chat.max_tokens or link.route.max_output_tokens, own_key=link.own_key)
             for link in decision.chain]
    prompt = ex.routed.prompt_tokens_estimate
    calls = chat.n * (2 if decision.policy.structured_output_reask and chat.response_format_type else 1)
    reserved = reservation_micros(prompt_tokens=prompt, links=links, plan=key.plan, markup_bps=key.markup_bps,
                                  guardrail_micros=guardrail_micros, calls=calls)
    most_output = max((link.max_output_tokens for link in links), default=0)
    return Admission(limits, tokens=prompt + chat.n * most_output, cost_micros=reserved, now=time.time())


async def limits_admit(state: AppState, ex: Exchange) -> None:
    """Admit the request against its organization's, project's and key's limits, once; set the exchange's
    reservation and limit headers. Raises LimitRefused (429) over a limit, ApiError 503 when the counters
    cannot be reached and the limiter fails closed."""
    assert ex.key is not None
    key = ex.key
    limits = state.snapshot_holder.billing.limits.for_key(organization_id=key.organization_id,
                                                          project_id=key.project_id, key_id=key.key_id)
    if not limits:
        return
    # The most the policy's checks can add (every check runs, whatever it finds).
    admission = _admission(ex, limits, sum(charge.price_micros for charge in ex.guardrails.charges()))
    try:
        verdict = await state.limiter.admit(admission)
    except LimitsUnavailable as exc:
        raise ApiError(exc.status, exc.message, code=exc.code) from exc
    if not verdict.admitted:
        refusal = limit_refusal(verdict, now=admission.now)
        raise LimitRefused(refusal.status, refusal.message, code=refusal.code, type=refusal.type,
                           headers=refusal.headers)
    ex.reservation = verdict.reservation
    ex.limit_headers = limit_headers(verdict, now=admission.now)


def limits_settle(state: AppState, ex: Exchange) -> asyncio.Task[None] | None:
    """Settle the request's reservation to what it was charged (every billed call and check), or release it when
    nothing was billed; off the response path. Call once, after the request's log record (its breakdown)."""
    reservation = ex.reservation
    if reservation is None:
        return None
    ex.reservation = None
    breakdown = ex.breakdown
    if not ex.billed and (breakdown is None or breakdown.cost_micros == 0):
        return state.background.spawn(state.limiter.release(reservation))
    tokens = sum(b.usage.prompt_tokens + b.usage.completion_tokens for b in ex.billed)
    return state.background.spawn(state.limiter.settle(reservation, tokens=tokens,
                                                       cost_micros=breakdown.cost_micros if breakdown is not None else 0))


__all__ = ["NO_BILLING", "BillingSnapshot", "LimitRefused", "Reservation", "limiter_from_settings", "limits_admit",
           "limits_settle"]
