"""The policy in force for one request: the routing policy, narrowed (never widened) by the request."""

from __future__ import annotations

from dataclasses import dataclass

from ..decision import RoutingOverrides
from ..snapshot import INFERBASE_DEFAULT_POLICY, PolicySnap

FLOOR_THRESHOLDS: dict[str, float] = {"none": 0.0, "basic": 0.40, "standard": 0.55, "strict": 0.70}
FLOOR_ORDER: tuple[str, ...] = ("none", "basic", "standard", "strict")
OBJECTIVES: tuple[str, ...] = ("quality", "cost", "latency", "balanced")


@dataclass(frozen=True, slots=True)
class Narrowed:
    """Every setting routing applies to this request, with the rules that set them and what was ignored."""

    objective: str
    floor: str
    floor_by_task: bool
    allowed_providers: frozenset[str] | None  # None: every provider
    data_regions: frozenset[str] | None  # None: every region
    max_cost_micros: int | None
    chain_length: int
    first_token_timeout_ms: int
    total_deadline_ms: int
    prefer_cache: bool
    ignored: tuple[str, ...]


def narrowed_policy(policy: PolicySnap, overrides: RoutingOverrides, task: str | None) -> Narrowed:
    """Combine policy and request: a request value applies only when it is narrower; wider ones are ignored."""
    ignored: list[str] = []
    return Narrowed(
        objective=_objective(policy, overrides, ignored),
        floor=_floor(policy, overrides, task, ignored),
        floor_by_task=task is not None and task in policy.quality_floor_by_task,
        allowed_providers=_providers(policy, overrides, ignored),
        data_regions=frozenset(policy.data_regions) or None,
        max_cost_micros=_lower("max_cost_micros", policy.max_cost_micros, overrides.max_cost_micros,
                               "higher", ignored),
        chain_length=max(1, _lower("chain_length", policy.chain_length,
                                   None if overrides.chain_length is None else max(1, overrides.chain_length),
                                   "longer", ignored) or 1),
        first_token_timeout_ms=_lower("first_token_timeout_ms", policy.first_token_timeout_ms,
                                      overrides.first_token_timeout_ms, "longer", ignored)
        or policy.first_token_timeout_ms,
        total_deadline_ms=_lower("deadline_ms", policy.total_deadline_ms, overrides.deadline_ms, "longer", ignored)
        or policy.total_deadline_ms,
        prefer_cache=bool(overrides.prefer_cache),
        ignored=tuple(ignored),
    )


def policy_rules(policy: PolicySnap, narrowed: Narrowed, *, auto: bool) -> list[str]:
    """Return one short string per rule in force that differs from the Inferbase default."""
    default = INFERBASE_DEFAULT_POLICY
    rules: list[str] = []
    if auto and narrowed.floor != default.quality_floor:
        rules.append(f"quality_floor: {narrowed.floor}" + (" for this task" if narrowed.floor_by_task else ""))
    if narrowed.allowed_providers is not None:
        rules.append(f"allowed_providers: {', '.join(sorted(narrowed.allowed_providers))}")
    if narrowed.data_regions is not None:
        rules.append(f"data_regions: {', '.join(sorted(narrowed.data_regions))}")
    if narrowed.max_cost_micros is not None:
        rules.append(f"max_cost_micros: {narrowed.max_cost_micros}")
    if narrowed.objective != default.objective or narrowed.objective != policy.objective:
        rules.append(f"objective: {narrowed.objective}")
    if narrowed.chain_length != default.chain_length:
        rules.append(f"chain_length: {narrowed.chain_length}")
    if narrowed.first_token_timeout_ms != default.first_token_timeout_ms:
        rules.append(f"first_token_timeout_ms: {narrowed.first_token_timeout_ms}")
    if narrowed.total_deadline_ms != default.total_deadline_ms:
        rules.append(f"total_deadline_ms: {narrowed.total_deadline_ms}")
    return rules


def _objective(policy: PolicySnap, overrides: RoutingOverrides, ignored: list[str]) -> str:
    base = policy.objective if policy.objective in OBJECTIVES else "balanced"
    if overrides.optimize is None:
        return base
    if overrides.optimize not in OBJECTIVES:
        ignored.append(f"routing.optimize: {overrides.optimize} is not an objective")
        return base
    return overrides.optimize


def _floor(policy: PolicySnap, overrides: RoutingOverrides, task: str | None, ignored: list[str]) -> str:
    base = policy.quality_floor_by_task.get(task, policy.quality_floor) if task else policy.quality_floor
    if base not in FLOOR_THRESHOLDS:
        base = "standard"
    wanted = overrides.quality_floor
    if wanted is None or wanted == base:
        return base
    if wanted not in FLOOR_THRESHOLDS:
        ignored.append(f"routing.quality_floor: {wanted} is not a preset")
        return base
    if FLOOR_ORDER.index(wanted) < FLOOR_ORDER.index(base):
        ignored.append(f"routing.quality_floor: {wanted} is looser than the policy's {base}")
        return base
    return wanted


def _providers(policy: PolicySnap, overrides: RoutingOverrides, ignored: list[str]) -> frozenset[str] | None:
    allowed = frozenset(policy.allowed_providers) or None
    asked = frozenset(overrides.allowed_providers or ())
    if not asked:
        return allowed
    outside = sorted(asked - allowed) if allowed is not None else []
    if outside:
        ignored.append(f"routing.allowed_providers: {', '.join(outside)} not allowed by the policy")
    kept = asked if allowed is None else asked & allowed
    return kept or allowed


def _lower(name: str, policy_value: int | None, asked: int | None, wider: str, ignored: list[str]) -> int | None:
    if asked is None:
        return policy_value
    if policy_value is not None and asked > policy_value:
        ignored.append(f"routing.{name}: {wider} than the policy's")
        return policy_value
    return asked
