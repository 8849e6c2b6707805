"""cost_micros: what a request costs the organization, in integer micro-dollars, with its breakdown.

Money is integers end to end. Prices are micro-dollars per million tokens ($0.15/M = 150_000), so
tokens × price is an exact integer in picodollars (1 micro-dollar = 1,000,000 picodollars). The
markup is integer basis points. A request is rounded once, never per token or per attempt:

    charged provider micros = round_half_up(Σ managed picos × (10_000 + markup_bps) / (10_000 × 1_000_000))
    cost_micros             = charged provider micros + Σ guardrail check prices      (free plan: 0)

Attempts served on the project's own provider key contribute no provider price and no markup; the
guardrail checks are charged on every key. docs/billing.md states the rule with examples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

TOKENS_PER_PRICE_UNIT = 1_000_000  # prices are per million tokens
PICOS_PER_MICRO = 1_000_000
BPS = 10_000
FREE_PLAN = "free"


@dataclass(frozen=True, slots=True)
class Price:
    """A route's list prices in integer micro-dollars per million tokens ($0.15/M = 150_000)."""

    input: int
    output: int
    cached_input: int | None = None  # None: cached prompt tokens cost the input price


@dataclass(frozen=True, slots=True)
class UsageCounts:
    """Tokens an upstream billed for one attempt; completion_tokens includes reasoning_tokens."""

    prompt_tokens: int
    completion_tokens: int
    cached_prompt_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass(frozen=True, slots=True)
class BilledAttempt:
    """One upstream call the provider billed: the served one, a re-ask, or a failed attempt it billed."""

    usage: UsageCounts
    price: Price
    own_key: bool = False  # served on the project's own provider key: no provider price, no markup
    route: str = ""
    model: str = ""
    reason: str = "served"  # served | reask | failed_billed


@dataclass(frozen=True, slots=True)
class GuardrailCharge:
    """One guardrail check run on a request, at its price (charged on every key, waived on the free plan)."""

    check: str
    where: str  # input | output
    price_micros: int


@dataclass(frozen=True, slots=True)
class AttemptCost:
    """An attempt's provider tokens by price line, each line exact in picodollars."""

    route: str
    model: str
    reason: str
    own_key: bool
    input_tokens: int  # uncached prompt tokens
    cached_input_tokens: int
    output_tokens: int  # includes reasoning
    reasoning_tokens: int
    input_picos: int
    cached_input_picos: int
    output_picos: int

    @property
    def provider_picos(self) -> int:
        return self.input_picos + self.cached_input_picos + self.output_picos

    def as_dict(self) -> dict[str, Any]:
        return {
            "route": self.route, "model": self.model, "reason": self.reason, "own_key": self.own_key,
            "input_tokens": self.input_tokens, "cached_input_tokens": self.cached_input_tokens,
            "output_tokens": self.output_tokens, "reasoning_tokens": self.reasoning_tokens,
            "input_picos": self.input_picos, "cached_input_picos": self.cached_input_picos,
            "output_picos": self.output_picos, "provider_picos": self.provider_picos,
        }


@dataclass(frozen=True, slots=True)
class Waiver:
    """A rule that waived part of the price: `own_provider_key` (provider price and markup) or `free_plan` (all)."""

    rule: str
    waived: str
    micros: int  # what would have been charged without the rule (rounded once, for reading)


@dataclass(frozen=True, slots=True)
class CostBreakdown:
    """What a request was charged and why; cost_micros is the one figure every surface shows."""

    attempts: tuple[AttemptCost, ...]
    provider_picos: int  # list price of the attempts on managed keys, exact
    markup_bps: int
    provider_micros: int  # that list price alone, rounded (for reading; not added again)
    markup_micros: int  # charged provider micros − provider_micros, so the two add up exactly
    guardrails: tuple[GuardrailCharge, ...]
    guardrail_micros: int
    waivers: tuple[Waiver, ...]
    cost_micros: int

    def as_dict(self) -> dict[str, Any]:
        """Return the breakdown as the log record stores it (JSON-ready, integers only)."""
        return {
            "attempts": [a.as_dict() for a in self.attempts],
            "provider_picos": self.provider_picos,
            "provider_micros": self.provider_micros,
            "markup_bps": self.markup_bps,
            "markup_micros": self.markup_micros,
            "guardrails": [{"check": g.check, "where": g.where, "price_micros": g.price_micros} for g in self.guardrails],
            "guardrail_micros": self.guardrail_micros,
            "waived": [{"rule": w.rule, "waived": w.waived, "micros": w.micros} for w in self.waivers],
            "cost_micros": self.cost_micros,
        }


def round_half_up(numerator: int, denominator: int) -> int:
    """Return numerator / denominator rounded half up (both non-negative integers)."""
    return (2 * numerator + denominator) // (2 * denominator)


def ceil_div(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator)


def charge_multiplier(*, plan: str, markup_bps: int) -> float:
    """Return what the organization is charged per micro-dollar of list price on a managed key: the markup, or
    nothing on the free plan (routing weighs cost ceilings with it)."""
    return 0.0 if plan == FREE_PLAN else (BPS + markup_bps) / BPS


def marked_up_micros(picos: int, markup_bps: int) -> int:
    """Return picodollars of list price, marked up, as micro-dollars: the request's one rounding."""
    return round_half_up(picos * (BPS + markup_bps), BPS * PICOS_PER_MICRO)


def attempt_cost(attempt: BilledAttempt) -> AttemptCost:
    """Price one attempt's tokens line by line (exact picodollars; cached tokens are capped at the prompt)."""
    usage, price = attempt.usage, attempt.price
    prompt = max(usage.prompt_tokens, 0)
    cached = min(max(usage.cached_prompt_tokens, 0), prompt)
    output = max(usage.completion_tokens, 0)
    cached_price = price.cached_input if price.cached_input is not None else price.input
    return AttemptCost(
        route=attempt.route, model=attempt.model, reason=attempt.reason, own_key=attempt.own_key,
        input_tokens=prompt - cached, cached_input_tokens=cached, output_tokens=output,
        reasoning_tokens=max(usage.reasoning_tokens, 0),
        input_picos=(prompt - cached) * price.input, cached_input_picos=cached * cached_price,
        output_picos=output * price.output,
    )


def cost_breakdown(attempts: Sequence[BilledAttempt], *, plan: str, markup_bps: int,
                   guardrails: Sequence[GuardrailCharge] = ()) -> CostBreakdown:
    """Return the request's charge: managed provider price marked up and rounded once, plus guardrail checks.

    Own-key attempts are priced (and shown) but waived; on the free plan everything is waived and
    cost_micros is 0. Raises ValueError on a negative price or markup."""
    if markup_bps < 0 or any(min(a.price.input, a.price.output, a.price.cached_input or 0) < 0 for a in attempts):
        raise ValueError("prices and markup must not be negative")
    costs = tuple(attempt_cost(a) for a in attempts)
    managed = sum(c.provider_picos for c in costs if not c.own_key)
    own = sum(c.provider_picos for c in costs if c.own_key)
    charged_provider = marked_up_micros(managed, markup_bps)
    provider_micros = round_half_up(managed, PICOS_PER_MICRO)
    guardrail_micros = sum(g.price_micros for g in guardrails)
    waivers: list[Waiver] = []
    if own:
        waivers.append(Waiver("own_provider_key", "provider price and markup", marked_up_micros(own, markup_bps)))
    total = charged_provider + guardrail_micros
    if plan == FREE_PLAN:
        waivers.append(Waiver("free_plan", "provider price, markup and guardrail checks", total))
        total = 0
    return CostBreakdown(
        attempts=costs, provider_picos=managed, markup_bps=markup_bps, provider_micros=provider_micros,
        markup_micros=charged_provider - provider_micros, guardrails=tuple(guardrails),
        guardrail_micros=guardrail_micros, waivers=tuple(waivers), cost_micros=total,
    )


@dataclass(frozen=True, slots=True)
class ReservationLink:
    """One link of a request's chain as the reservation sees it: its prices and the most it may output."""

    price: Price
    max_output_tokens: int
    own_key: bool = False


def reservation_micros(*, prompt_tokens: int, links: Sequence[ReservationLink], plan: str, markup_bps: int,
                       guardrail_micros: int = 0, calls: int = 1) -> int:
    """Return the request's worst-case cost, reserved against budgets before any upstream call.

    The whole prompt uncached plus each link's max output, at the most expensive link of the chain,
    marked up and rounded up; times `calls` (n choices made as n calls, a re-ask the policy allows);
    plus the most the guardrail checks can cost. A fallback is not added: one attempt is served."""
    if plan == FREE_PLAN:
        return 0
    worst = max((0 if link.own_key else prompt_tokens * link.price.input + link.max_output_tokens * link.price.output
                 for link in links), default=0)
    return ceil_div(worst * max(calls, 1) * (BPS + markup_bps), BPS * PICOS_PER_MICRO) + guardrail_micros


def micros_per_mtok(usd_per_mtok: Decimal | str | float | int) -> int:
    """Return a USD-per-million-tokens price as integer micro-dollars per million tokens (0.15 -> 150_000).

    Converted once, where prices enter (the routing snapshot); rounded half up below a micro-dollar
    per million tokens, which the catalog (six decimals) never has."""
    value = usd_per_mtok if isinstance(usd_per_mtok, Decimal) else Decimal(str(usd_per_mtok))
    return int((value * TOKENS_PER_PRICE_UNIT).to_integral_value(rounding=ROUND_HALF_UP))
