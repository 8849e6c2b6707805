"""Ranking contenders on the objective, the margin of the win, and the sentence that explains it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..snapshot import ModelSnap, RouteSnap
from .estimates import Thinking
from .filters import Credential

ALTERNATIVES_SHOWN = 5
BALANCED_WEIGHTS = (0.5, 0.25, 0.25)  # quality, cost, latency


@dataclass(slots=True)
class Option:
    """One route of a contender with what it is expected to cost and how long it is expected to take."""

    route: RouteSnap
    credential: Credential
    cost: float
    wait: float | None


@dataclass(slots=True)
class Contender:
    """An eligible model: its routes best first, score, thinking, and standing."""

    model: ModelSnap
    options: list[Option]
    score: float | None
    proxied: bool
    thinking: Thinking
    demoted: bool = False
    utility: float | None = None

    @property
    def best(self) -> Option:
        """Return the route the model is ranked by."""
        return self.options[0]


def route_order_key(option: Option, objective: str, prefer_cache: bool) -> tuple[Any, ...]:
    """Order a model's routes: real before simulated, caching first when preferred, then the objective."""
    route, wait = option.route, option.wait
    no_cache = prefer_cache and route.prompt_caching == "none"
    if objective == "cost":
        return (route.provider_kind == "simulated", no_cache, option.cost, route.route_id)
    if objective == "latency":
        return (route.provider_kind == "simulated", no_cache, wait is None, wait or 0.0, route.route_id)
    return (route.provider_kind == "simulated", no_cache, option.cost, wait is None, wait or 0.0, route.route_id)


def axis_value(contender: Contender, objective: str) -> float | None:
    """Return the contender's value on the objective's axis (None when it has none)."""
    if objective == "quality":
        return contender.score
    if objective == "cost":
        return contender.best.cost
    if objective == "latency":
        return contender.best.wait
    return contender.utility


def set_utilities(contenders: list[Contender]) -> None:
    """Give each contender its balanced utility, each axis min-max normalised (missing counts as worst)."""
    quality = _normalised([c.score for c in contenders], higher_is_better=True)
    cost = _normalised([c.best.cost for c in contenders], higher_is_better=False)
    latency = _normalised([c.best.wait for c in contenders], higher_is_better=False)
    wq, wc, wl = BALANCED_WEIGHTS
    for contender, q, c, lat in zip(contenders, quality, cost, latency, strict=True):
        contender.utility = wq * q + wc * c + wl * lat


def ranked(contenders: list[Contender], objective: str) -> list[Contender]:
    """Return contenders best first on the objective, ties by id; demoted models go behind all others."""
    if objective == "balanced":
        set_utilities(contenders)

    def key(contender: Contender) -> tuple[Any, ...]:
        value = axis_value(contender, objective)
        descending = objective in ("quality", "balanced")
        return (contender.demoted, value is None, -(value or 0.0) if descending else (value or 0.0),
                contender.model.id)

    return sorted(contenders, key=key)


def decisiveness(pick: Contender, others: list[Contender], objective: str) -> tuple[float | None, str]:
    """Return (margin over the runner-up on the objective's axis, basis): lead, unmeasured or no_contest."""
    if not others:
        return None, "no_contest"
    first, second = axis_value(pick, objective), axis_value(others[0], objective)
    if first is None or second is None:
        return None, "unmeasured"
    if objective == "balanced":
        margin = first - second
    elif objective == "quality":
        margin = (first - second) / first if first > 0 else 0.0
    else:
        margin = (second - first) / second if second > 0 else 0.0
    return round(min(1.0, max(0.0, margin)), 3), "lead"


def alternatives(order: list[Contender], objective: str) -> list[dict[str, Any]]:
    """Return the top contenders with their standings, the pick first."""
    shown = []
    for rank, contender in enumerate(order[:ALTERNATIVES_SHOWN], start=1):
        entry: dict[str, Any] = {
            "model": contender.model.id,
            "rank": rank,
            "quality": _rounded(contender.score, 3),
            "expected_cost_micros": round(contender.best.cost),
            "expected_wait_ms": None if contender.best.wait is None else round(contender.best.wait),
        }
        if objective == "balanced" and contender.utility is not None:
            entry["utility"] = _rounded(contender.utility, 3)
        shown.append(entry)
    return shown


def win_sentence(pick: Contender, others: list[Contender], objective: str, basis: str, task: str | None,
                 pool_size: int) -> str:
    """Return the rule that decided, without the closing period."""
    eligible = models_in(len(others) + 1)
    if basis == "no_contest":
        return f"{pick.model.id} was the only model of {pool_size} in the pool that met every requirement"
    runner = others[0]
    lead = _LEADS[objective] if objective != "quality" else f"Highest {_score_label(pick, task)}"
    if basis == "unmeasured":
        missing = pick if axis_value(pick, objective) is None else runner
        return f"{lead} among {eligible} ({missing.model.id} has no {_MISSING[objective]} to compare)"
    first = _shown(axis_value(pick, objective), objective)
    second = _shown(axis_value(runner, objective), objective)
    return f"{lead} among {eligible} ({first} vs {second} for {runner.model.id})"


def demotion_clause(order: list[Contender]) -> str:
    """Return the clause naming always-reasoning models put behind the others, or ''."""
    demoted = [c.model.id for c in order if c.demoted]
    if not demoted:
        return ""
    names = ", ".join(demoted[:3]) + (f" and {len(demoted) - 3} more" if len(demoted) > 3 else "")
    verb, pronoun = ("was", "it always does") if len(demoted) == 1 else ("were", "they always do")
    return (f"; {names} {verb} placed behind the others because max_tokens leaves too little room "
            f"for the reasoning {pronoun}")


def models_in(count: int) -> str:
    """Return 'N eligible models' in the right number."""
    return "1 eligible model" if count == 1 else f"{count} eligible models"


_LEADS = {
    "cost": "Lowest expected cost",
    "latency": "Shortest expected wait",
    "balanced": "Highest balanced utility",
}
_MISSING = {
    "quality": "benchmark score",
    "cost": "price",
    "latency": "latency measurement",
    "balanced": "utility",
}


def _score_label(pick: Contender, task: str | None) -> str:
    if pick.proxied or task is None:
        return "overall score"
    return f"{task} score"


def _shown(value: float | None, objective: str) -> str:
    if value is None:
        return "none"
    if objective == "cost":
        return f"{value:,.0f} micro-dollars"
    if objective == "latency":
        return f"{value:,.0f} ms"
    return f"{value:.2f}"


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _normalised(values: list[float | None], *, higher_is_better: bool) -> list[float]:
    present = [v for v in values if v is not None]
    if not present:
        return [0.0] * len(values)
    low, high = min(present), max(present)
    span = high - low
    result = []
    for value in values:
        if value is None:
            result.append(0.0)
        elif span == 0:
            result.append(1.0)
        else:
            share = (value - low) / span
            result.append(share if higher_is_better else 1.0 - share)
    return result
