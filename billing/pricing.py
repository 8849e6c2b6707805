"""cost_micros: what a request costs the organization, in micro-dollars."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RoutePrice:
    """Prices in micro-dollars per token (numerically equal to USD per million tokens)."""

    input: float
    output: float
    cached_input: float | None = None


@dataclass(frozen=True, slots=True)
class UsageCounts:
    prompt_tokens: int
    completion_tokens: int
    cached_prompt_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Charging:
    """How the organization is charged: plan, managed markup, and whether its own provider key served."""

    plan: str = "pro"
    markup_bps: int = 0
    own_provider_key: bool = False
    guardrail_micros: int = 0


def provider_cost_micros(usage: UsageCounts, price: RoutePrice) -> float:
    """Return the provider's list price for the usage, unrounded, in micro-dollars."""
    cached = min(max(usage.cached_prompt_tokens, 0), usage.prompt_tokens)
    cached_price = price.cached_input if price.cached_input is not None else price.input
    return (usage.prompt_tokens - cached) * price.input + cached * cached_price + usage.completion_tokens * price.output


def cost_micros(usage: UsageCounts, price: RoutePrice, charging: Charging) -> int:
    """Return the amount charged: provider price plus guardrails plus markup; own key: guardrails only; free plan: 0."""
    if charging.plan == "free":
        return 0
    if charging.own_provider_key:
        return charging.guardrail_micros
    provider = provider_cost_micros(usage, price)
    marked_up = provider * (10_000 + charging.markup_bps) / 10_000
    return int(round(marked_up)) + charging.guardrail_micros


def worst_case_cost_micros(prompt_tokens: int, max_output_tokens: int, price: RoutePrice) -> float:
    """Return the most a request could cost at list price: the whole prompt uncached plus max output."""
    return prompt_tokens * price.input + max_output_tokens * price.output
