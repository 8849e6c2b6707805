"""Latency and failure evidence from traffic: the pure maths over a route's samples.

No I/O and no clock: the evidence task hands in the samples and the time, and stores what comes out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

OUTCOMES = ("served", "truncated", "error", "timeout")


@dataclass(frozen=True, slots=True)
class Sample:
    """One attempt on a route. Times in milliseconds from the attempt's start; `at` in seconds (wall clock)."""

    at: float
    outcome: str  # served | truncated | error | timeout
    end_to_end_ms: int
    first_token_ms: int | None = None
    first_answer_token_ms: int | None = None
    output_tokens: int | None = None

    @property
    def answered(self) -> bool:
        """True when the attempt produced an answer (whole, or cut off at max_tokens)."""
        return self.outcome in ("served", "truncated")


@dataclass(frozen=True, slots=True)
class Window:
    """Which samples count: those of the last `seconds`, at most the newest `max_samples` of them."""

    seconds: float
    max_samples: int

    def text(self) -> str:
        return f"last {self.seconds:g} s, at most {self.max_samples} samples"


@dataclass(frozen=True, slots=True)
class RouteFigures:
    """A route's figures over its window. Percentiles are None when no sample carries that time."""

    samples: int  # answered attempts (served or truncated)
    first_token_ms_p50: int | None
    first_token_ms_p90: int | None
    first_answer_token_ms_p50: int | None
    first_answer_token_ms_p90: int | None
    end_to_end_ms_p50: int | None
    end_to_end_ms_p90: int | None
    output_tokens_per_s: float | None
    failure_samples: int  # every attempt counted in the rates
    error_rate: float
    timeout_rate: float
    truncation_rate: float


@dataclass(frozen=True, slots=True)
class CooldownRules:
    """When a route cools down: `threshold` of its last attempts failing (at least `min_samples` of them,
    within `window_seconds`) rests it for `seconds`; `probe_min` answered probes since it began lift it early."""

    threshold: float
    min_samples: int
    window_seconds: float
    seconds: float
    probe_min: int = 3


@dataclass(frozen=True, slots=True)
class Cooldown:
    """A route resting fleet-wide, from `since` until `until` (wall-clock seconds), and why."""

    since: float
    until: float
    failure_rate: float
    samples: int


def percentile(values: Sequence[float], q: float) -> float | None:
    """Return the q-th percentile (0..100) by linear interpolation between closest ranks; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    if len(ordered) == 1:
        return float(ordered[0])
    rank = (len(ordered) - 1) * q / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def in_window(samples: Sequence[Sample], window: Window, now: float) -> list[Sample]:
    """Return the samples of the window, newest first."""
    start = now - window.seconds
    recent = sorted((s for s in samples if start <= s.at <= now), key=lambda s: s.at, reverse=True)
    return recent[: window.max_samples]


def output_tokens_per_s(samples: Sequence[Sample]) -> float | None:
    """Return the median decode speed of answered samples: output tokens over the time after the first token
    (the whole attempt when no first token was seen); None when no sample has tokens and time to divide."""
    rates = []
    for sample in samples:
        if not sample.answered or not sample.output_tokens:
            continue
        decoding_ms = sample.end_to_end_ms - (sample.first_token_ms or 0)
        if decoding_ms > 0:
            rates.append(sample.output_tokens * 1000.0 / decoding_ms)
    rate = percentile(rates, 50)
    return None if rate is None else round(rate, 1)


def _rounded(value: float | None) -> int | None:
    return None if value is None else int(round(value))


def route_figures(samples: Sequence[Sample]) -> RouteFigures:
    """Return the percentiles, decode speed and failure rates of one route's samples (already windowed)."""
    answered = [s for s in samples if s.answered]
    first = [s.first_token_ms for s in answered if s.first_token_ms is not None]
    answer = [s.first_answer_token_ms for s in answered if s.first_answer_token_ms is not None]
    whole = [s.end_to_end_ms for s in answered]
    total = len(samples)

    def rate(outcome: str) -> float:
        return round(sum(1 for s in samples if s.outcome == outcome) / total, 4) if total else 0.0

    return RouteFigures(
        samples=len(answered),
        first_token_ms_p50=_rounded(percentile(first, 50)),
        first_token_ms_p90=_rounded(percentile(first, 90)),
        first_answer_token_ms_p50=_rounded(percentile(answer, 50)),
        first_answer_token_ms_p90=_rounded(percentile(answer, 90)),
        end_to_end_ms_p50=_rounded(percentile(whole, 50)),
        end_to_end_ms_p90=_rounded(percentile(whole, 90)),
        output_tokens_per_s=output_tokens_per_s(answered),
        failure_samples=total,
        error_rate=rate("error"),
        timeout_rate=rate("timeout"),
        truncation_rate=rate("truncated"),
    )


def failure_rate(samples: Sequence[Sample]) -> float:
    """Return the share of attempts that failed (error or timeout); 0 without samples."""
    if not samples:
        return 0.0
    return sum(1 for s in samples if s.outcome in ("error", "timeout")) / len(samples)


def cooldown_next(samples: Sequence[Sample], current: Cooldown | None, rules: CooldownRules,
                  now: float) -> Cooldown | None:
    """Return the route's cooldown after this look at its samples, or None when it may serve.

    A cooldown under way holds until its end unless `probe_min` attempts since it began (the probes let
    through) failed less often than the threshold; a new one starts when the attempts of the window,
    counting only those since the last cooldown began, fail at the threshold or more."""
    start = now - rules.window_seconds
    if current is not None:
        since_start = [s for s in samples if s.at >= current.since]
        if now < current.until:
            if len(since_start) >= rules.probe_min and failure_rate(since_start) < rules.threshold:
                return None  # the probes say it has recovered
            return current
        start = max(start, current.since)  # judged again only on what happened since it began
    recent = [s for s in samples if s.at >= start]
    if len(recent) >= rules.min_samples and failure_rate(recent) >= rules.threshold:
        return Cooldown(since=now, until=now + rules.seconds, failure_rate=round(failure_rate(recent), 4),
                        samples=len(recent))
    return None
