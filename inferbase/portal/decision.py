"""A request's log and routing decision, put the way the detail page shows them: model names, numbers beside
each sentence, the spec's meaning of each code."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from observability.selectors import LogRecord

from .rows import LogRow, Names, dollars, log_row, model_labels

# The spec's words for decisiveness_basis and thinking_reason (spec/routing.txt).
BASIS_MEANING = {
    "lead": "the margin was measured against the runner-up",
    "unmeasured": "a second model competed, but one side has no value on the objective's axis "
                  "(no price, no latency sample or no benchmark cell)",
    "no_contest": "no second model qualified",
    "pinned": "the request named the model",
}
THINKING_MEANING = {
    "max_tokens": "auto turned thinking off: the output limit leaves no room to think before answering",
    "easy_prompt": "auto turned thinking off: the prompt is among the easiest it classifies",
    "latency_mode": "auto turned thinking off: the objective is latency",
    "task_needs_thinking": "auto asked for thinking: the task is a factual question, maths or coding",
    "cheaper_with_thinking": "auto left thinking to the model: answering without it would have cost more",
    "model_ignores_off": "thinking was off on the request, but the model reasons regardless, so its reasoning "
                         "counts toward max_tokens",
    "route_cannot_think": "the request asked for thinking and the model, as served, cannot reason",
}
WAIT_BASIS_MEANING = {
    "first_token": "to the first token (streamed, the model does not think)",
    "first_answer_token": "to the first answer token (streamed, its usual reasoning comes first)",
    "end_to_end": "end to end (not streamed: nothing arrives before the whole answer)",
}
_TRAIL_NUMBERS = ("step", "in", "out")
# The order fields are shown in (PostgreSQL's jsonb keeps no order): the spec's, then any others by name.
REQUESTED_ORDER = ("optimize", "model_pool", "quality_floor", "max_cost_micros", "first_token_timeout_ms",
                   "deadline_ms", "allowed_providers", "chain_length", "prefer_cache", "extended_thinking",
                   "max_tokens")
REPAIR_ORDER = ("applied", "method", "reason", "reasked", "schema_valid", "schema_errors")
# A catalog id in a sentence: letters, digits and - _ : . / inside, ending on a letter or digit.
_ID_LIKE = re.compile(r"[A-Za-z0-9][\w\-:./]*\w")


@dataclass(frozen=True, slots=True)
class TrailLine:
    sentence: str
    step: str
    kept: str  # "17 of 26"
    extras: str  # the step's other numbers, "preset: standard"


@dataclass(frozen=True, slots=True)
class ChainLine:
    position: int
    route: str
    provider: str
    model: str
    outcome: str  # what became of it: "served", "timeout", or "not tried"


@dataclass(frozen=True, slots=True)
class AttemptLine:
    number: int
    route: str
    model: str
    outcome: str
    status: int | None
    ms: int | None
    error: str


@dataclass(frozen=True, slots=True)
class Standing:
    rank: int
    model: str
    model_id: str
    quality: float | None
    expected_cost: str
    expected_cost_micros: int | None
    expected_wait_ms: int | None
    utility: float | None
    picked: bool
    served: bool


@dataclass(frozen=True, slots=True)
class CheckLine:
    check: str
    where: str
    action: str
    count: int
    kinds: str  # "card 1, email 1", by name (PostgreSQL's jsonb keeps no order)


@dataclass(frozen=True, slots=True)
class ChargeLine:
    label: str
    cost: str  # dollars, exact to the micro-dollar
    micros: int
    note: str


@dataclass(frozen=True, slots=True)
class DecisionPage:
    row: LogRow
    log: dict[str, Any]
    routed: bool
    routing: dict[str, Any]
    trail: list[TrailLine]
    chain: list[ChainLine]
    attempts: list[AttemptLine]
    standings: list[Standing]
    pick: str
    reasoning: str
    basis_meaning: str
    thinking_meaning: str
    wait_basis_meaning: str
    policy: dict[str, Any] | None
    requested_routing: dict[str, Any]
    requested_other: dict[str, Any]
    repair: dict[str, Any]
    decision: dict[str, Any] | None
    dropped_params: list[str] = field(default_factory=list)
    dropped_pool: list[str] = field(default_factory=list)
    checks: list[CheckLine] = field(default_factory=list)
    charges: list[ChargeLine] = field(default_factory=list)


def in_order(values: dict[str, Any], order: tuple[str, ...]) -> dict[str, Any]:
    """Return the mapping with the keys in `order` first, in that order, then the rest by name."""
    rank = {name: index for index, name in enumerate(order)}
    return dict(sorted(values.items(), key=lambda item: (rank.get(item[0], len(order)), item[0])))


def names_in_text(text: str, names: Names) -> str:
    """Return the sentence with each catalog id in it replaced by the model's name."""
    return _ID_LIKE.sub(lambda m: names.models.get(m.group(0), m.group(0)), text)


def _asked_routing(asked: dict[str, Any], names: Names) -> dict[str, Any]:
    """Return the request's routing object as the page shows it: the models of its pool by name."""
    shown = dict(asked)
    if isinstance(shown.get("model_pool"), list):
        shown["model_pool"] = model_labels(shown["model_pool"], names.models)
    return shown


def _trail(decision: dict[str, Any]) -> list[TrailLine]:
    steps = list(decision.get("filter_trail") or [])
    sentences = list(decision.get("filter_trail_text") or [])
    lines = []
    for index in range(max(len(steps), len(sentences))):
        step = steps[index] if index < len(steps) else {}
        kept = f"{step['out']} of {step['in']}" if "in" in step and "out" in step else ""
        extras = ", ".join(f"{k}: {v}" for k, v in step.items() if k not in _TRAIL_NUMBERS)
        lines.append(TrailLine(sentences[index] if index < len(sentences) else "", str(step.get("step", "")),
                               kept, extras))
    return lines


def _model_of_route(route: str) -> str:
    return route.split("/", 1)[1] if "/" in route else route


def _attempts(raw: list[dict[str, Any]], names: Names) -> list[AttemptLine]:
    return [AttemptLine(number, str(a.get("route", "")), names.model(a.get("model") or _model_of_route(a.get("route", ""))),
                        str(a.get("outcome", "")).replace("_", " "), a.get("status"), a.get("ms"), a.get("error", ""))
            for number, a in enumerate(raw, start=1)]


def _chain(decision: dict[str, Any], attempts: list[dict[str, Any]], names: Names) -> list[ChainLine]:
    displays = decision.get("route_displays") or {}
    outcomes: dict[str, str] = {}
    for attempt in attempts:  # the last attempt on a route says how it ended
        outcomes[attempt.get("route", "")] = str(attempt.get("outcome", "")).replace("_", " ")
    lines = []
    for position, route in enumerate(decision.get("chain_attempted") or [], start=1):
        model_id = _model_of_route(route)
        model = names.models.get(model_id) or displays.get(route) or model_id
        lines.append(ChainLine(position, route, route.split("/", 1)[0], model, outcomes.get(route, "not tried")))
    return lines


def _standings(routing: dict[str, Any], served_id: str, names: Names) -> list[Standing]:
    out = []
    for entry in routing.get("alternatives") or []:
        model_id = str(entry.get("model", ""))
        cost = entry.get("expected_cost_micros")
        out.append(Standing(int(entry.get("rank", 0)), names.model(model_id), model_id, entry.get("quality"),
                            dollars(cost) if cost is not None else "", cost, entry.get("expected_wait_ms"),
                            entry.get("utility"), model_id == routing.get("model"), model_id == served_id))
    return out


def _checks(results: list[dict[str, Any]]) -> list[CheckLine]:
    return [CheckLine(str(r.get("check", "")), str(r.get("where", "")), str(r.get("action", "")), int(r.get("count", 0)),
                      ", ".join(f"{kind} {n}" for kind, n in sorted((r.get("kinds") or {}).items())))
            for r in results]


def _percent_of_bps(bps: int) -> str:
    return f"{bps // 100}.{bps % 100:02d}%"


def _charges(breakdown: dict[str, Any]) -> list[ChargeLine]:
    """Return the log's cost breakdown as lines that add up to its cost_micros (waivers shown, not added)."""
    if not breakdown:
        return []
    attempts = breakdown.get("attempts") or []
    reasons = ", ".join(f"{a.get('reason', '')}{' (own provider key)' if a.get('own_key') else ''}" for a in attempts)
    calls = f"{len(attempts)} billed call{'' if len(attempts) == 1 else 's'}: {reasons}" if attempts else "no billed call"
    provider, markup = int(breakdown.get("provider_micros", 0)), int(breakdown.get("markup_micros", 0))
    lines = [ChargeLine("Provider price", dollars(provider), provider, calls),
             ChargeLine("Markup", dollars(markup), markup, _percent_of_bps(int(breakdown.get("markup_bps", 0))))]
    for check in breakdown.get("guardrails") or []:
        price = int(check.get("price_micros", 0))
        lines.append(ChargeLine(f"Check {check.get('check', '')} on the {check.get('where', '')}", dollars(price),
                                price, ""))
    for waiver in breakdown.get("waived") or []:
        micros = int(waiver.get("micros", 0))
        lines.append(ChargeLine(f"Waived by {waiver.get('rule', '')}", dollars(micros), micros,
                                str(waiver.get("waived", ""))))
    total = int(breakdown.get("cost_micros", 0))
    lines.append(ChargeLine("Total", dollars(total), total, ""))
    return lines


def decision_page(record: LogRecord, names: Names) -> DecisionPage:
    """Return everything the detail page shows for one request."""
    log, decision = record.log, record.decision
    routing = dict((decision or {}).get("routing") or {})
    attempts = list((decision or {}).get("attempts") or log.get("attempts") or [])
    requested = dict(log.get("requested") or {})
    pick = str(routing.get("model") or "")
    return DecisionPage(
        row=log_row(log, names),
        log=log,
        routed=bool(routing),
        routing=routing,
        trail=_trail(decision) if decision else [],
        chain=_chain(decision, attempts, names) if decision else [],
        attempts=_attempts(attempts, names),
        standings=_standings(routing, log.get("model_served") or "", names),
        pick=names.model(pick),
        reasoning=names_in_text(str(routing.get("reasoning") or ""), names),
        basis_meaning=BASIS_MEANING.get(str(routing.get("decisiveness_basis")), ""),
        thinking_meaning=THINKING_MEANING.get(str(routing.get("thinking_reason")), ""),
        wait_basis_meaning=WAIT_BASIS_MEANING.get(str(routing.get("wait_basis")), ""),
        policy=routing.get("policy"),
        requested_routing=in_order(_asked_routing(requested.get("routing") or {}, names), REQUESTED_ORDER),
        requested_other=in_order({k: v for k, v in requested.items() if k != "routing"}, REQUESTED_ORDER),
        repair=in_order(dict(log.get("structured_output_repair") or {}), REPAIR_ORDER),
        decision=decision,
        dropped_params=list(log.get("dropped_params") or []),
        dropped_pool=[names.model(model_id) for model_id in routing.get("dropped_pool_ids") or []],
        checks=_checks(list(log.get("guardrails") or [])),
        charges=_charges(dict(log.get("cost_breakdown") or {})),
    )
