"""cost_micros in integers: one rounding per request, the breakdown, waivers, the reservation."""

from __future__ import annotations

import itertools
from decimal import Decimal
from fractions import Fraction

import pytest

from billing.pricing import (
    BilledAttempt,
    GuardrailCharge,
    Price,
    ReservationLink,
    UsageCounts,
    charge_multiplier,
    cost_breakdown,
    micros_per_mtok,
    reservation_micros,
    round_half_up,
)

PRICE = Price(input=150_000, output=600_000, cached_input=75_000)  # $0.15 / $0.60 / $0.075 per million
DEAR = Price(input=3_000_000, output=15_000_000)  # $3 / $15, no cached price
MARKUP_BPS = 550

GUARDRAIL_SETS = {
    "no checks": (),
    "two checks": (GuardrailCharge("pii", "input", 50), GuardrailCharge("secrets", "output", 20)),
}
EXTRA_ATTEMPTS = ("none", "reask", "failed_billed")


def _oracle(attempts: list[BilledAttempt], plan: str, markup_bps: int, guardrails: tuple[GuardrailCharge, ...]) -> int:
    """The rule of docs/billing.md in exact fractions: sum, mark up, round half up once; add the checks."""
    if plan == "free":
        return 0
    dollars = Fraction(0)
    for a in attempts:
        if a.own_key:
            continue
        cached = min(a.usage.cached_prompt_tokens, a.usage.prompt_tokens)
        cached_price = a.price.cached_input if a.price.cached_input is not None else a.price.input
        dollars += Fraction((a.usage.prompt_tokens - cached) * a.price.input + cached * cached_price
                            + a.usage.completion_tokens * a.price.output, 1_000_000)
    marked = dollars * Fraction(10_000 + markup_bps, 10_000)
    floor = marked.numerator // marked.denominator
    rounded = floor + (1 if marked - floor >= Fraction(1, 2) else 0)
    return rounded + sum(g.price_micros for g in guardrails)


CASES = list(itertools.product(("free", "pro"), ("managed", "own"), GUARDRAIL_SETS, (0, 400), (0, 300), EXTRA_ATTEMPTS))


@pytest.mark.parametrize(("plan", "key_kind", "guardrails", "cached", "reasoning", "extra"), CASES)
def test_cost_micros_follows_the_rule(plan: str, key_kind: str, guardrails: str, cached: int, reasoning: int,
                                      extra: str) -> None:
    own = key_kind == "own"
    served = BilledAttempt(UsageCounts(1_234, 567 + reasoning, cached_prompt_tokens=cached, reasoning_tokens=reasoning),
                           PRICE, own_key=own, route="groq/a", model="a")
    attempts = [served]
    if extra == "reask":
        attempts.append(BilledAttempt(UsageCounts(1_300, 211), PRICE, own_key=own, route="groq/a", model="a",
                                      reason="reask"))
    elif extra == "failed_billed":
        # The failed attempt was on another provider, managed whatever key served the answer.
        attempts.insert(0, BilledAttempt(UsageCounts(1_234, 99), DEAR, route="together/b", model="b",
                                         reason="failed_billed"))
    checks = GUARDRAIL_SETS[guardrails]
    breakdown = cost_breakdown(attempts, plan=plan, markup_bps=MARKUP_BPS, guardrails=checks)
    assert breakdown.cost_micros == _oracle(attempts, plan, MARKUP_BPS, checks)
    assert len(breakdown.attempts) == len(attempts)
    assert [a.reason for a in breakdown.attempts] == [a.reason for a in attempts]
    if plan == "pro":
        assert breakdown.cost_micros == breakdown.provider_micros + breakdown.markup_micros + breakdown.guardrail_micros
    rules = [w.rule for w in breakdown.waivers]
    assert ("own_provider_key" in rules) == own
    assert ("free_plan" in rules) == (plan == "free")


def test_own_key_is_charged_only_the_guardrail_checks() -> None:
    attempt = BilledAttempt(UsageCounts(10_000, 10_000), DEAR, own_key=True)
    breakdown = cost_breakdown([attempt], plan="pro", markup_bps=500, guardrails=GUARDRAIL_SETS["two checks"])
    assert breakdown.cost_micros == 70
    assert breakdown.provider_picos == 0
    assert breakdown.waivers[0].micros == round(Decimal("180000") * Decimal("1.05"))  # $0.18 list, marked up


def test_free_plan_is_charged_nothing_and_says_what_it_waived() -> None:
    breakdown = cost_breakdown([BilledAttempt(UsageCounts(1_000, 1_000), PRICE)], plan="free", markup_bps=500,
                               guardrails=GUARDRAIL_SETS["two checks"])
    assert breakdown.cost_micros == 0
    assert breakdown.as_dict()["waived"] == [{"rule": "free_plan", "waived": "provider price, markup and guardrail checks",
                                              "micros": 788 + 70}]  # 750 * 1.05 = 787.5 -> 788


def test_a_request_is_rounded_once_not_per_attempt() -> None:
    tiny = Price(input=400_000, output=0)  # 0.4 micro-dollars per token
    attempts = [BilledAttempt(UsageCounts(1, 0), tiny, reason=r) for r in ("failed_billed", "reask", "served")]
    # Rounded per attempt: 0 + 0 + 0. Rounded once: 1.2 -> 1.
    assert cost_breakdown(attempts, plan="pro", markup_bps=0).cost_micros == 1


def test_a_request_is_rounded_once_not_per_token() -> None:
    price = Price(input=1_500_000, output=0)  # 1.5 micro-dollars per token: per token each rounds to 2
    assert cost_breakdown([BilledAttempt(UsageCounts(3, 0), price)], plan="pro", markup_bps=0).cost_micros == 5


def test_half_a_micro_rounds_up() -> None:
    assert round_half_up(1, 2) == 1
    assert round_half_up(3, 2) == 2
    assert round_half_up(1_499_999, 1_000_000) == 1
    price = Price(input=500_000, output=0)
    assert cost_breakdown([BilledAttempt(UsageCounts(1, 0), price)], plan="pro", markup_bps=0).cost_micros == 1


def test_breakdown_lines_are_exact_and_reasoning_is_output() -> None:
    usage = UsageCounts(1_000, 800, cached_prompt_tokens=400, reasoning_tokens=500)
    line = cost_breakdown([BilledAttempt(usage, PRICE)], plan="pro", markup_bps=0).attempts[0]
    assert (line.input_tokens, line.cached_input_tokens, line.output_tokens, line.reasoning_tokens) == (600, 400, 800, 500)
    assert (line.input_picos, line.cached_input_picos, line.output_picos) == (90_000_000, 30_000_000, 480_000_000)


def test_cached_tokens_without_a_cached_price_cost_the_input_price() -> None:
    usage = UsageCounts(1_000, 0, cached_prompt_tokens=400)
    assert cost_breakdown([BilledAttempt(usage, DEAR)], plan="pro", markup_bps=0).cost_micros == 3_000


def test_breakdown_as_dict_is_integers_only() -> None:
    breakdown = cost_breakdown([BilledAttempt(UsageCounts(1_234, 567), PRICE, route="groq/a", model="a")],
                               plan="pro", markup_bps=MARKUP_BPS, guardrails=GUARDRAIL_SETS["two checks"])

    def numbers(value: object) -> list[object]:
        if isinstance(value, dict):
            return [n for v in value.values() for n in numbers(v)]
        if isinstance(value, list):
            return [n for v in value for n in numbers(v)]
        return [value] if isinstance(value, int | float) and not isinstance(value, bool) else []

    as_dict = breakdown.as_dict()
    assert as_dict["cost_micros"] == breakdown.cost_micros
    assert all(isinstance(n, int) for n in numbers(as_dict))


def test_negative_prices_are_refused() -> None:
    with pytest.raises(ValueError):
        cost_breakdown([BilledAttempt(UsageCounts(1, 1), Price(-1, 0))], plan="pro", markup_bps=0)


def test_catalog_prices_convert_exactly() -> None:
    assert micros_per_mtok(Decimal("0.150000")) == 150_000
    assert micros_per_mtok(0.15) == 150_000
    assert micros_per_mtok("15") == 15_000_000
    assert micros_per_mtok(Decimal("0.0000005")) == 1  # below the resolution: half up


def test_charge_multiplier_is_the_markup_of_the_integer_rule() -> None:
    # Routing's estimate of a charge (list price x multiplier) agrees with cost_breakdown before its rounding.
    assert charge_multiplier(plan="pro", markup_bps=550) == 1.055
    assert charge_multiplier(plan="free", markup_bps=550) == 0.0
    charged = cost_breakdown([BilledAttempt(UsageCounts(1_000_000, 0), Price(150_000, 0))], plan="pro",
                             markup_bps=550).cost_micros
    assert charged == round(150_000 * charge_multiplier(plan="pro", markup_bps=550))


def test_reservation_is_the_most_expensive_link_marked_up_and_rounded_up() -> None:
    links = [ReservationLink(PRICE, 1_000), ReservationLink(DEAR, 500), ReservationLink(PRICE, 100_000)]
    # PRICE with 100k output: 2000*0.15 + 100000*0.6 = 60_300; DEAR: 2000*3 + 500*15 = 13_500.
    assert reservation_micros(prompt_tokens=2_000, links=links, plan="pro", markup_bps=0) == 60_300
    assert reservation_micros(prompt_tokens=2_000, links=links, plan="pro", markup_bps=1) == 60_307  # 60306.03 up
    assert reservation_micros(prompt_tokens=2_000, links=links, plan="pro", markup_bps=0, guardrail_micros=70,
                              calls=2) == 120_670


def test_reservation_covers_the_actual_cost_of_any_single_attempt() -> None:
    links = [ReservationLink(PRICE, 300), ReservationLink(DEAR, 300)]
    reserved = reservation_micros(prompt_tokens=1_000, links=links, plan="pro", markup_bps=MARKUP_BPS)
    for price in (PRICE, DEAR):
        actual = cost_breakdown([BilledAttempt(UsageCounts(1_000, 300, reasoning_tokens=200), price)],
                                plan="pro", markup_bps=MARKUP_BPS).cost_micros
        assert actual <= reserved


def test_reservation_is_zero_on_the_free_plan_and_skips_own_key_links() -> None:
    assert reservation_micros(prompt_tokens=10, links=[ReservationLink(DEAR, 10)], plan="free", markup_bps=0) == 0
    links = [ReservationLink(DEAR, 10_000, own_key=True), ReservationLink(PRICE, 10)]
    assert reservation_micros(prompt_tokens=10, links=links, plan="pro", markup_bps=0) == 8  # 1.5 + 6 = 7.5 -> 8
