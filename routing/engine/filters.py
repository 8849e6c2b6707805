"""The eligibility steps: each narrows the candidate models and records a trail entry in plain words."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

from ..decision import RoutingError, RoutingRequest
from ..snapshot import ModelSnap, PolicySnap, RouteCooldownSnap, RouteSnap, Snapshot
from .estimates import ANSWER_RESERVE, worst_case_cost_micros
from .narrowing import FLOOR_THRESHOLDS, Narrowed

Credential = tuple[str | None, bool]

NOT_SERVABLE_REASONS = {
    "credential": "a provider credential",
    "provider": "a provider the policy allows",
    "region": "a provider in the allowed data regions",
    "health": "a provider whose API answered its latest health probe",
}
RESTING_SHOWN = 3  # resting routes named in a sentence; the trail record lists them all


class HasModel(Protocol):
    """Anything still in the running: a candidate or a ranked contender."""

    @property
    def model(self) -> ModelSnap: ...


M = TypeVar("M", bound=HasModel)


@dataclass(slots=True)
class Candidate:
    """A model still in the running, with the routes that can still serve it."""

    model: ModelSnap
    routes: list[tuple[RouteSnap, Credential]]
    score: float | None = None  # set by the preset step
    proxied: bool = False


@dataclass(slots=True)
class Trail:
    """The filter trail: records, sentences, and the step that removed each model."""

    records: list[dict[str, Any]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    removed_by: dict[str, str] = field(default_factory=dict)

    def add(self, step: str, before: int, after: int, text: str, **extra: Any) -> None:
        """Append one step."""
        self.records.append({"step": step, "in": before, "out": after, **extra})
        self.texts.append(text)

    def failure(self, message: str, *, status: int, code: str, param: str | None = None) -> RoutingError:
        """Return a RoutingError carrying the trail so far."""
        return RoutingError(message, status=status, code=code, param=param,
                            filter_trail=tuple(self.records), filter_trail_text=tuple(self.texts))


@dataclass(slots=True)
class Refusals:
    """Why routes were not servable: the static reasons (NOT_SERVABLE_REASONS keys), the routes resting
    after repeated failures (this process's circuit breaker), and the routes cooling down fleet-wide
    after failing too often (the evidence task), each with the wall-clock time it rests until."""

    reasons: set[str] = field(default_factory=set)
    resting: dict[str, float] = field(default_factory=dict)
    cooling: dict[str, RouteCooldownSnap] = field(default_factory=dict)

    def add(self, other: Refusals) -> None:
        """Merge another model's refusals into these."""
        self.reasons |= other.reasons
        self.resting.update(other.resting)
        self.cooling.update(other.cooling)

    def clear(self) -> None:
        self.reasons.clear()
        self.resting.clear()
        self.cooling.clear()

    def clause(self, subject: str, *, singular: bool) -> str:
        """Return e.g. 'the others lack a provider credential, or have routes resting after repeated
        failures (groq/a until 2026-10-12T14:03:07Z)'; '' when nothing was refused."""
        parts = []
        if self.reasons:
            verb = "lacks" if singular else "lack"
            parts.append(f"{verb} " + " or ".join(NOT_SERVABLE_REASONS[r] for r in sorted(self.reasons)))
        if self.resting:
            verb = "has" if singular else "have"
            parts.append(f"{verb} routes resting after repeated failures ({resting_list(self.resting)})")
        if self.cooling:
            verb = "has" if singular else "have"
            parts.append(f"{verb} routes cooling down after failing across the fleet ({cooling_list(self.cooling)})")
        return f"{subject} " + ", or ".join(parts) if parts else ""


def cooling_list(cooling: dict[str, RouteCooldownSnap]) -> str:
    """Return 'groq/a until 2026-10-12T14:03:07Z: 75% of its last 12 attempts failed, ...' for the first few."""
    routes = sorted(cooling)
    shown = "; ".join(f"{route} until {utc_text(cooling[route].until)}: {cooling[route].reason}"
                      for route in routes[:RESTING_SHOWN])
    more = len(routes) - RESTING_SHOWN
    return shown + (f"; and {more} more" if more > 0 else "")


def probe_admits(cooldown: RouteCooldownSnap, request: RoutingRequest, probe_share: float) -> bool:
    """Return True when this request may try a cooling route: its cooldown is over, or half of it has
    passed and the request is among the share of traffic that probes it."""
    if request.now >= cooldown.until:
        return True
    halfway = cooldown.since + (cooldown.until - cooldown.since) / 2
    return request.now >= halfway and request.ticket < probe_share


def resting_list(resting: dict[str, float]) -> str:
    """Return 'groq/a until 2026-10-12T14:03:07Z, ...' for the first few resting routes."""
    routes = sorted(resting)
    shown = ", ".join(f"{route} until {utc_text(resting[route])}" for route in routes[:RESTING_SHOWN])
    more = len(routes) - RESTING_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def utc_text(wall: float) -> str:
    """Return a wall-clock time (seconds since the epoch) as ISO 8601 UTC, to the second."""
    return datetime.fromtimestamp(wall, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class Pool:
    """The models routing may choose from, and what the request's pool could not use."""

    models: list[ModelSnap]
    dropped: list[str]
    substituted: dict[str, str]  # base id -> the variant the request's pool named
    ignored: list[str]


def models_noun(count: int) -> str:
    """Return '1 model' or 'N models'."""
    return f"{count} model" if count == 1 else f"{count} models"


def of_phrase(after: int, before: int, singular: str, plural: str) -> str:
    """Return e.g. '16 of 20 models fit', the verb agreeing with the first number."""
    noun = "model" if before == 1 else "models"
    return f"{after} of {before} {noun} {singular if after == 1 else plural}"


def in_policy_pool(model: ModelSnap, policy: PolicySnap) -> bool:
    """Return True when the policy's pool admits the model (a listed base admits its variants)."""
    if model.variant_label is not None and not policy.allow_variants:
        return False
    if not policy.pool:
        return True
    return model.id in policy.pool or (model.variant_label is not None and model.base_id in policy.pool)


def _static_refusal(route: RouteSnap, snapshot: Snapshot, project_id: int | None,
                    narrowed: Narrowed) -> tuple[Credential | None, str | None]:
    """Why a route is not servable apart from its health (None when it is), else its credential."""
    if narrowed.allowed_providers is not None and route.provider not in narrowed.allowed_providers:
        return None, "provider"
    if narrowed.data_regions is not None and narrowed.data_regions.isdisjoint(route.data_regions):
        return None, "region"
    credential = snapshot.credential_for(route, project_id)
    if credential is None:
        return None, "credential"
    if route.provider_down:
        return None, "health"
    return credential, None


SERVABLE_MEMO_LIMIT = 4096


def servable_routes(model: ModelSnap, snapshot: Snapshot, request: RoutingRequest, narrowed: Narrowed,
                    refusals: Refusals | None = None) -> list[tuple[RouteSnap, Credential]]:
    """Return the model's servable routes with their credentials, noting why others are not in refusals.

    Provider, region and credential depend only on the snapshot, the project and the narrowing, so
    they are worked out once per snapshot for each such combination; route health (this process's
    breaker, the fleet's cooldowns with their probes) is per request."""
    key = ("servable", model.id, request.project_id, narrowed.allowed_providers, narrowed.data_regions)
    known = snapshot.memo.get(key)
    if known is None:
        servable, refused = [], set()
        for route in snapshot.routes.get(model.id, ()):
            credential, reason = _static_refusal(route, snapshot, request.project_id, narrowed)
            if credential is not None:
                servable.append((route, credential))
            elif reason is not None:
                refused.add(reason)
        if len(snapshot.memo) >= SERVABLE_MEMO_LIMIT:
            snapshot.memo.clear()
        cooling = any(route.cooldown is not None for route, _ in servable)
        known = snapshot.memo[key] = (tuple(servable), frozenset(refused), cooling)
    routes, refused, cooling = known
    if refusals is not None and refused:
        refusals.reasons.update(refused)
    resting = request.resting_routes
    if not resting and not cooling:
        return list(routes)
    kept = []
    for pair in routes:
        route = pair[0]
        until = resting.get(route.route_id)
        if until is not None:
            if refusals is not None:
                refusals.resting[route.route_id] = until
        elif route.cooldown is not None and not probe_admits(route.cooldown, request, snapshot.probe_share):
            if refusals is not None:
                refusals.cooling[route.route_id] = route.cooldown
        else:
            kept.append(pair)
    return kept


def effective_pool(snapshot: Snapshot, policy: PolicySnap, request: RoutingRequest, narrowed: Narrowed) -> Pool:
    """Return the policy's pool narrowed by the request's model_pool; ids it cannot use are dropped."""
    policy_pool = [model for model in snapshot.models.values() if in_policy_pool(model, policy)]
    asked = request.overrides.model_pool
    if not asked:
        return Pool(sorted(policy_pool, key=_model_id), [], {}, [])
    admitted = {model.id for model in policy_pool}
    chosen: dict[str, ModelSnap] = {}
    dropped: list[str] = []
    substituted: dict[str, str] = {}
    for model_id in dict.fromkeys(asked):
        model = snapshot.models.get(model_id)
        if model is None or model_id not in admitted:
            dropped.append(model_id)
            continue
        if model.variant_label is not None and not servable_routes(model, snapshot, request, narrowed):
            base = snapshot.models.get(model.base_id)
            if base is not None and base.id in admitted:
                substituted[base.id] = model_id
                model = base
        chosen[model.id] = model
    for base_id in [base_id for base_id in substituted if base_id in asked]:
        del substituted[base_id]  # the request named the base itself too
    if not chosen:
        return Pool(sorted(policy_pool, key=_model_id), dropped, {},
                    ["routing.model_pool: none of its models are in the policy's pool"])
    return Pool(sorted(chosen.values(), key=_model_id), dropped, substituted, [])


def context_fit_test(request: RoutingRequest) -> Callable[[RouteSnap], bool]:
    """Return a test that prompt plus answer (max_tokens, else a reserve) fit a route's window and output limit."""
    needed = request.prompt_tokens + (request.max_tokens if request.max_tokens is not None else ANSWER_RESERVE)
    max_tokens = request.max_tokens or 0

    def fits(route: RouteSnap) -> bool:
        return needed <= route.context_window and max_tokens <= route.max_output_tokens

    return fits


def cost_ceiling_test(request: RoutingRequest, ceiling: int) -> Callable[[RouteSnap], bool]:
    """Return a test that a route's worst-case cost stays under the ceiling."""

    def under(route: RouteSnap) -> bool:
        return worst_case_cost_micros(route, request) <= ceiling

    return under


def request_needs(request: RoutingRequest) -> list[str]:
    """Return the capabilities the request needs, in words."""
    needs = []
    if request.needs_tools:
        needs.append("tools")
    if request.needs_structured_output:
        needs.append("structured output")
    if request.needs_vision:
        needs.append("vision")
    return needs


def supports_needs(model: ModelSnap, request: RoutingRequest) -> bool:
    """Return True when the model has every capability the request needs."""
    return ((not request.needs_tools or model.supports_tools)
            and (not request.needs_structured_output or model.verified_structured_output)
            and (not request.needs_vision or model.supports_vision))


def task_score(model: ModelSnap, snapshot: Snapshot, task: str | None) -> tuple[float | None, bool]:
    """Return (score, proxied): the task's benchmark, else the overall score (proxied), else (None, False)."""
    benchmarks = model.benchmarks
    if not benchmarks and model.base_id != model.id:
        base = snapshot.models.get(model.base_id)
        benchmarks = base.benchmarks if base is not None else benchmarks
    if task is not None and task in benchmarks:
        return benchmarks[task], False
    if "overall" in benchmarks:
        return benchmarks["overall"], True
    return None, False


def meets_floor(score: float | None, floor: str) -> bool:
    """Return True when the score clears the preset; unmeasured models pass only none and basic."""
    if score is None:
        return floor in ("none", "basic")
    return score >= FLOOR_THRESHOLDS[floor]


def run_servable(candidates: list[Candidate], trail: Trail, snapshot: Snapshot, request: RoutingRequest,
                 narrowed: Narrowed) -> tuple[list[Candidate], Refusals]:
    """Keep models with at least one servable route; return them and why the removed ones have none."""
    removed = Refusals()
    refusals = Refusals()  # one candidate's, reused: only a removed model's refusals explain the step
    kept = []
    for candidate in candidates:
        candidate.routes = servable_routes(candidate.model, snapshot, request, narrowed, refusals)
        if candidate.routes:
            kept.append(candidate)
        else:
            trail.removed_by[candidate.model.id] = "servable"
            removed.add(refusals)
        if refusals.reasons or refusals.resting or refusals.cooling:
            refusals.clear()
    text = of_phrase(len(kept), len(candidates), "has", "have") + " a servable route"
    if kept:
        clause = removed.clause("the others", singular=False)
    else:
        clause = removed.clause("it" if len(candidates) == 1 else "they", singular=len(candidates) == 1)
    if clause:
        text += "; " + clause
    extra: dict[str, Any] = {}
    if removed.resting:
        extra["resting_until"] = {r: utc_text(t) for r, t in sorted(removed.resting.items())}
    if removed.cooling:
        extra["cooldown_until"] = {r: utc_text(c.until) for r, c in sorted(removed.cooling.items())}
    trail.add("servable", len(candidates), len(kept), text + ".", **extra)
    return kept, removed


def run_route_filter(candidates: list[Candidate], trail: Trail, step: str, keep: Callable[[RouteSnap], bool],
                     text: str,
                     singular: str, plural: str, **extra: Any) -> list[Candidate]:
    """Drop routes failing keep(route); a model with no route left is removed."""
    def routes_left(candidate: Candidate) -> bool:
        candidate.routes = [pair for pair in candidate.routes if keep(pair[0])]
        return bool(candidate.routes)

    return run_model_filter(candidates, trail, step, routes_left, text, singular, plural, **extra)


def run_model_filter(candidates: list[M], trail: Trail, step: str, keep: Callable[[M], bool], text: str,
                     singular: str, plural: str, **extra: Any) -> list[M]:
    """Drop candidates failing keep(candidate)."""
    kept = []
    for candidate in candidates:
        if keep(candidate):
            kept.append(candidate)
        else:
            trail.removed_by[candidate.model.id] = step
    trail.add(step, len(candidates), len(kept), f"{of_phrase(len(kept), len(candidates), singular, plural)} {text}.",
              **extra)
    return kept


def run_fit_steps(candidates: list[Candidate], trail: Trail, request: RoutingRequest,
                  narrowed: Narrowed) -> tuple[list[Candidate], str | None]:
    """Run context, capability and cost-ceiling steps; return the survivors and the step that emptied them."""
    candidates = run_route_filter(candidates, trail, "context_fit", context_fit_test(request),
                                  "the request's length", "fits", "fit")
    if not candidates:
        return candidates, "context_fit"
    needs = request_needs(request)
    if needs:
        candidates = run_model_filter(candidates, trail, "capability_fit",
                                      lambda candidate: supports_needs(candidate.model, request),
                                      f"what the request needs ({', '.join(needs)})", "supports", "support")
        if not candidates:
            return candidates, "capability_fit"
    ceiling = narrowed.max_cost_micros
    if ceiling is not None:
        candidates = run_route_filter(candidates, trail, "cost_ceiling", cost_ceiling_test(request, ceiling),
                                      f"under the {ceiling} micro-dollar ceiling", "stays", "stay",
                                      max_cost_micros=ceiling)
        if not candidates:
            return candidates, "cost_ceiling"
    return candidates, None


def run_preset(candidates: list[Candidate], trail: Trail, snapshot: Snapshot, task: str | None,
               floor: str, *, admit_unmeasured: bool = False) -> list[Candidate]:
    """Score each candidate for the task and keep those that clear the quality floor; under a policy that
    admits unmeasured models, a model without any benchmark score passes (its floor is none)."""
    for candidate in candidates:
        candidate.score, candidate.proxied = task_score(candidate.model, snapshot, task)
    if not admit_unmeasured:
        return run_model_filter(candidates, trail, "preset_eligibility", lambda c: meets_floor(c.score, floor),
                                f"the {floor} quality floor for this task", "meets", "meet", preset=floor)
    admitted = [c.model.id for c in candidates if c.score is None and not meets_floor(None, floor)]
    kept = run_model_filter(candidates, trail, "preset_eligibility",
                            lambda c: c.score is None or meets_floor(c.score, floor),
                            f"the {floor} quality floor for this task", "meets", "meet", preset=floor,
                            **({"admitted_unmeasured": admitted} if admitted else {}))
    if admitted:
        names = ", ".join(admitted[:RESTING_SHOWN]) + (f" and {len(admitted) - RESTING_SHOWN} more"
                                                         if len(admitted) > RESTING_SHOWN else "")
        trail.texts[-1] = (trail.texts[-1][:-1] + f", counting {names}, without benchmark scores, "
                           "which the policy admits with no quality floor.")
    return kept


def _model_id(model: ModelSnap) -> str:
    return model.id
