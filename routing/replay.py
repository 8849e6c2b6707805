"""The dry-run of a policy: logged requests routed again, on paper, under an edited policy.

Pure: each request is rebuilt from what its log row stored (classification, prompt tokens, what it asked
of routing) and handed to `decide` with the edited policy; no upstream is called and nothing is written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any

from .decision import Classification, RoutingError, RoutingOverrides, RoutingRequest
from .engine import decide
from .snapshot import PolicySnap, Snapshot

TOOL_USE = "tool_use"  # the classifier gives this task exactly when the request carried tools
_OVERRIDE_FIELDS = {f.name for f in fields(RoutingOverrides)}
_TUPLE_OVERRIDES = ("model_pool", "allowed_providers")


@dataclass(frozen=True, slots=True)
class ReplayRow:
    """One logged request as the dry-run needs it: what it asked, and what routing picked then."""

    request_id: str
    model_requested: str
    task: str
    complexity: str
    prompt_tokens: int
    stream: bool
    requested: dict[str, Any]  # the log row's `requested`: routing object, extended_thinking, max_tokens
    project_id: int | None
    then_model: str | None  # None when it was not routed
    then_cost_micros: int | None  # routing's estimate for the pick then (the actual cost when none is stored)
    then_wait_ms: int | None


@dataclass(frozen=True, slots=True)
class ReplayOutcome:
    row: ReplayRow
    now_model: str | None
    now_cost_micros: int | None
    now_wait_ms: int | None
    now_error: str | None  # why the edited policy would not route it

    @property
    def changed(self) -> bool:
        return self.row.then_model != self.now_model


@dataclass(frozen=True, slots=True)
class ReplayResult:
    outcomes: tuple[ReplayOutcome, ...]
    changed: int
    changes_by_model: tuple[tuple[str, str, int], ...]  # (then, now, count), most first; "—" for not routed
    then_cost_micros: int
    now_cost_micros: int
    not_routed_now: int
    picks_then: dict[str, int] = field(default_factory=dict)
    picks_now: dict[str, int] = field(default_factory=dict)

    @property
    def cost_difference_micros(self) -> int:
        return self.now_cost_micros - self.then_cost_micros


def replay_request(row: ReplayRow, *, now: float, cost_multiplier: float = 1.0) -> RoutingRequest:
    """Return the RoutingRequest a logged request made, rebuilt from its stored fields.

    The ticket is past every share, so the dry-run shows the ranked pick (no exploration, no probe)."""
    asked = row.requested or {}
    overrides = {k: v for k, v in (asked.get("routing") or {}).items() if k in _OVERRIDE_FIELDS}
    for name in _TUPLE_OVERRIDES:
        if overrides.get(name) is not None:
            overrides[name] = tuple(overrides[name])
    return RoutingRequest(
        model=row.model_requested or "auto",
        prompt_tokens=row.prompt_tokens,
        max_tokens=asked.get("max_tokens"),
        stream=row.stream,
        needs_tools=row.task == TOOL_USE,
        extended_thinking=asked.get("extended_thinking"),
        project_id=row.project_id,
        cost_multiplier=cost_multiplier,
        overrides=RoutingOverrides(**overrides),
        now=now,
        ticket=1.0,
    )


def policy_replay(rows: Iterable[ReplayRow], policy: PolicySnap, snapshot: Snapshot, *, now: float,
                  cost_multiplier: float = 1.0) -> ReplayResult:
    """Route each logged request again under `policy` (pure, no upstream); compare the picks and estimates."""
    outcomes = []
    for row in rows:
        request = replay_request(row, cost_multiplier=cost_multiplier, now=now)
        classification = Classification(row.task or None, row.complexity or None)
        try:
            decision = decide(request, classification, policy, snapshot)
        except RoutingError as exc:
            outcomes.append(ReplayOutcome(row, None, None, None, str(exc)))
            continue
        routing = decision.routing
        pick = routing["model"]
        cost = next((a["expected_cost_micros"] for a in routing.get("alternatives", ()) if a["model"] == pick), None)
        outcomes.append(ReplayOutcome(row, pick, cost, routing.get("expected_wait_ms"), None))
    return replay_summary(outcomes)


def replay_summary(outcomes: list[ReplayOutcome]) -> ReplayResult:
    """Count the changed decisions by (then, now) model and total the estimated costs of both sides."""
    moves = Counter((o.row.then_model or "—", o.now_model or "—") for o in outcomes if o.changed)
    return ReplayResult(
        outcomes=tuple(outcomes),
        changed=sum(moves.values()),
        changes_by_model=tuple((then, now, n) for (then, now), n in moves.most_common()),
        then_cost_micros=sum(o.row.then_cost_micros or 0 for o in outcomes),
        now_cost_micros=sum(o.now_cost_micros or 0 for o in outcomes),
        not_routed_now=sum(1 for o in outcomes if o.now_model is None),
        picks_then=dict(Counter(o.row.then_model or "—" for o in outcomes).most_common()),
        picks_now=dict(Counter(o.now_model or "—" for o in outcomes).most_common()),
    )
