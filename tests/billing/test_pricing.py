from __future__ import annotations

from billing.pricing import Charging, RoutePrice, UsageCounts, cost_micros, provider_cost_micros

PRICE = RoutePrice(input=0.15, output=0.60, cached_input=0.075)


def test_provider_cost_is_price_per_million_times_tokens() -> None:
    assert provider_cost_micros(UsageCounts(1_000_000, 0), PRICE) == 150_000
    assert provider_cost_micros(UsageCounts(0, 1000), PRICE) == 600


def test_cached_prompt_tokens_use_the_cached_price() -> None:
    assert provider_cost_micros(UsageCounts(1000, 0, cached_prompt_tokens=400), PRICE) == 600 * 0.15 + 400 * 0.075


def test_managed_markup_is_added() -> None:
    assert cost_micros(UsageCounts(1000, 1000), PRICE, Charging(plan="pro", markup_bps=500)) == round(750 * 1.05)


def test_free_plan_is_charged_nothing() -> None:
    assert cost_micros(UsageCounts(1000, 1000), PRICE, Charging(plan="free", markup_bps=500)) == 0


def test_own_provider_key_is_charged_only_guardrails() -> None:
    charging = Charging(plan="pro", markup_bps=500, own_provider_key=True, guardrail_micros=7)
    assert cost_micros(UsageCounts(1000, 1000), PRICE, charging) == 7
