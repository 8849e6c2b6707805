"""The aggregation maths of latency and failure evidence (pure: no database, no clock)."""

from __future__ import annotations

from routing.evidence import (
    Cooldown,
    CooldownRules,
    Sample,
    Window,
    cooldown_next,
    failure_rate,
    in_window,
    output_tokens_per_s,
    percentile,
    route_figures,
)

NOW = 1_800_000_000.0
RULES = CooldownRules(threshold=0.5, min_samples=4, window_seconds=300, seconds=120, probe_min=3)


def served(at: float = NOW, *, first: int | None = 100, answer: int | None = 150, e2e: int = 1100,
           tokens: int | None = 100) -> Sample:
    return Sample(at=at, outcome="served", end_to_end_ms=e2e, first_token_ms=first, first_answer_token_ms=answer,
                  output_tokens=tokens)


def failed(at: float = NOW, outcome: str = "error") -> Sample:
    return Sample(at=at, outcome=outcome, end_to_end_ms=50)


def test_percentile_interpolates_between_ranks() -> None:
    assert percentile([10, 20, 30, 40, 50], 50) == 30
    assert percentile([10, 20, 30, 40], 50) == 25
    assert percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90) == 9.1
    assert percentile([7], 90) == 7
    assert percentile([], 50) is None


def test_percentile_does_not_depend_on_order() -> None:
    assert percentile([50, 10, 40, 20, 30], 90) == percentile([10, 20, 30, 40, 50], 90) == 46


def test_window_keeps_recent_samples_newest_first_up_to_the_cap() -> None:
    samples = [served(NOW - 10), served(NOW - 4000), served(NOW - 5), served(NOW - 1), served(NOW + 5)]
    kept = in_window(samples, Window(seconds=3600, max_samples=2), NOW)
    assert [s.at for s in kept] == [NOW - 1, NOW - 5]


def test_output_tokens_per_s_is_the_median_decode_speed_after_the_first_token() -> None:
    samples = [served(first=100, e2e=1100, tokens=100),  # 100 tokens in 1 s of decoding
               served(first=200, e2e=700, tokens=100),  # 200 tokens/s
               served(first=None, e2e=2000, tokens=100)]  # no first token: the whole attempt, 50/s
    assert output_tokens_per_s(samples) == 100.0


def test_output_tokens_per_s_ignores_failures_and_samples_without_tokens() -> None:
    assert output_tokens_per_s([failed(), served(tokens=None), served(tokens=0)]) is None


def test_route_figures_percentiles_and_rates() -> None:
    samples = [served(first=f, answer=f + 50, e2e=1000 + f) for f in (100, 200, 300, 400)]
    samples += [failed(), failed(outcome="timeout"), Sample(at=NOW, outcome="truncated", end_to_end_ms=3000,
                                                           first_token_ms=500, output_tokens=50)]
    figures = route_figures(samples)
    assert figures.samples == 5  # answered: the four served and the truncated one
    assert figures.first_token_ms_p50 == 300
    assert figures.first_token_ms_p90 == 460
    assert figures.first_answer_token_ms_p50 == 300  # the truncated answer never reached its answer
    assert figures.end_to_end_ms_p50 == 1300
    assert figures.failure_samples == 7
    assert figures.error_rate == round(1 / 7, 4)
    assert figures.timeout_rate == round(1 / 7, 4)
    assert figures.truncation_rate == round(1 / 7, 4)


def test_route_figures_of_failures_only_have_no_latency() -> None:
    figures = route_figures([failed(), failed()])
    assert figures.samples == 0
    assert figures.first_token_ms_p50 is None and figures.end_to_end_ms_p50 is None
    assert figures.error_rate == 1.0


def test_failure_rate_counts_errors_and_timeouts_not_truncations() -> None:
    samples = [failed(), failed(outcome="timeout"), served(), Sample(at=NOW, outcome="truncated", end_to_end_ms=1)]
    assert failure_rate(samples) == 0.5
    assert failure_rate([]) == 0.0


def test_a_route_failing_at_the_threshold_cools_down() -> None:
    samples = [failed(NOW - i) for i in range(3)] + [served(NOW - 3)]
    cooldown = cooldown_next(samples, None, RULES, NOW)
    assert cooldown == Cooldown(since=NOW, until=NOW + 120, failure_rate=0.75, samples=4)


def test_too_few_attempts_or_a_low_rate_do_not_cool_a_route() -> None:
    assert cooldown_next([failed(NOW), failed(NOW - 1), failed(NOW - 2)], None, RULES, NOW) is None
    assert cooldown_next([failed(NOW), served(NOW), served(NOW), served(NOW)], None, RULES, NOW) is None


def test_failures_older_than_the_cooldown_window_do_not_count() -> None:
    samples = [failed(NOW - 400 - i) for i in range(5)] + [served(NOW)]
    assert cooldown_next(samples, None, RULES, NOW) is None


def test_a_cooldown_holds_until_its_end() -> None:
    current = Cooldown(since=NOW - 10, until=NOW + 110, failure_rate=0.8, samples=5)
    samples = [failed(NOW - 20 - i) for i in range(5)]
    assert cooldown_next(samples, current, RULES, NOW) is current


def test_probes_that_succeed_end_a_cooldown_early() -> None:
    current = Cooldown(since=NOW - 70, until=NOW + 50, failure_rate=0.8, samples=5)
    samples = [failed(NOW - 80 - i) for i in range(5)] + [served(NOW - 5), served(NOW - 3), served(NOW - 1)]
    assert cooldown_next(samples, current, RULES, NOW) is None


def test_after_its_end_a_route_is_judged_only_on_attempts_since_the_cooldown_began() -> None:
    current = Cooldown(since=NOW - 130, until=NOW - 10, failure_rate=0.8, samples=5)
    old_failures = [failed(NOW - 140 - i) for i in range(5)]
    assert cooldown_next(old_failures, current, RULES, NOW) is None
    again = old_failures + [failed(NOW - 5 - i) for i in range(4)]
    assert cooldown_next(again, current, RULES, NOW) == Cooldown(since=NOW, until=NOW + 120, failure_rate=1.0,
                                                                 samples=4)
