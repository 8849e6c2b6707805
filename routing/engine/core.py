"""decide(): the pinned and auto paths from request to chain and routing object."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from providers.base import NO_THINKING_SWITCH
from providers.registry import thinking_traits

from ..decision import ChainLink, Classification, Decision, RoutingError, RoutingRequest
from ..snapshot import ModelSnap, PolicySnap, RouteSnap, Snapshot
from .estimates import (
    Thinking,
    answer_tokens,
    expected_cost_micros,
    expected_wait_ms,
    leaves_no_room_to_think,
    reasoning_tokens,
    thinking_for,
    thinking_wish,
    wait_basis,
)
from .filters import (
    Candidate,
    Credential,
    Trail,
    effective_pool,
    in_policy_pool,
    models_noun,
    request_needs,
    run_fit_steps,
    run_preset,
    run_servable,
    servable_routes,
    task_score,
)
from .narrowing import Narrowed, narrowed_policy, policy_rules
from .ranking import (
    Contender,
    Option,
    alternatives,
    decisiveness,
    demotion_clause,
    models_in,
    ranked,
    route_order_key,
    win_sentence,
)
from .report import cache_fit, policy_field, session_field


def decide(request: RoutingRequest, classification: Classification, policy: PolicySnap,
           snapshot: Snapshot) -> Decision:
    """Choose the chain for one request (pure, deterministic); raise RoutingError when it cannot be routed."""
    narrowed = narrowed_policy(policy, request.overrides, classification.task)
    if request.is_auto:
        return _decide_auto(request, classification, policy, snapshot, narrowed)
    return _decide_pinned(request, classification, policy, snapshot, narrowed)


def _decide_auto(request: RoutingRequest, classification: Classification, policy: PolicySnap,
                 snapshot: Snapshot, narrowed: Narrowed) -> Decision:
    trail = Trail()
    pool = effective_pool(snapshot, policy, request, narrowed)
    extra = {"dropped_pool_ids": pool.dropped} if pool.dropped else {}
    trail.add("pool_loaded", len(snapshot.models), len(pool.models), f"{models_noun(len(pool.models))} in the pool.",
              **extra)
    if not pool.models:
        raise trail.failure("No model is in the routing pool.", status=503, code="no_eligible_model")
    candidates, refusals = run_servable([Candidate(m, []) for m in pool.models], trail, snapshot, request, narrowed)
    if not candidates:
        why = refusals.clause("they", singular=False) or "none of them has a route"
        raise trail.failure(f"No model in the pool has a servable route: {why}.", status=503,
                            code="no_eligible_model")
    candidates, emptied = run_fit_steps(candidates, trail, request, narrowed)
    if emptied is not None:
        raise trail.failure(f"No model in the pool {_EMPTIED[emptied](request, narrowed)}.", status=503,
                            code="no_eligible_model")
    task, floor = classification.task, narrowed.floor
    candidates = run_preset(candidates, trail, snapshot, task, floor, admit_unmeasured=policy.admit_unmeasured)
    if not candidates:
        raise trail.failure(f"No model in the pool meets the {floor} quality floor for this task.", status=503,
                            code="no_eligible_model")

    thinking_memo: dict[tuple[str, bool, bool | None, bool, bool | None], Thinking] = {}
    order = ranked([_contender(c, request, classification, narrowed, thinking_memo) for c in candidates],
                   narrowed.objective)
    sticky = next((c for c in order if c.model.id == request.session_model), None)
    explored = None if sticky is not None else exploration_pick(order, policy, request, snapshot.explore_share)
    pick = sticky or explored or order[0]
    others = [c for c in order if c is not pick]
    margin, basis = decisiveness(pick, others, narrowed.objective)
    if explored is not None:
        margin, basis = None, "unmeasured"
    final_order = [pick, *others]

    length = narrowed.chain_length
    steps = [(pick, option) for option in pick.options[:length]]
    if not request.tool_loop:
        steps += [(c, c.best) for c in others[: length - len(steps)]]
    chain = tuple(_link(contender, option) for contender, option in steps)
    _add_chain_step(trail, len(order), chain)

    if sticky is not None:
        sentence = f"Stayed on {pick.model.id}, the model that began the conversation, among {models_in(len(order))}"
    elif explored is not None:
        sentence = (f"Exploration: {pick.model.id} has no latency samples yet, so this request, one of the "
                    f"{snapshot.explore_share:.0%} of eligible traffic the policy sends to unmeasured models, went "
                    f"to it; the ranked pick was {order[0].model.id}")
    else:
        sentence = win_sentence(pick, others, narrowed.objective, basis, task, len(pool.models))
    rules = policy_rules(policy, narrowed, auto=True)
    if len(pool.models) < len(snapshot.models):
        rules.insert(0, f"pool: {len(pool.models)} of {models_noun(len(snapshot.models))}")
    routing = _routing_object(
        request, classification, narrowed, pick, chain,
        decisiveness=margin, basis=basis, reasoning=sentence + demotion_clause(final_order) + ".",
        alternatives=alternatives(final_order, narrowed.objective),
        session=session_field(request, pick.model.id, snapshot, trail.removed_by,
                              {m.id for m in pool.models}, pinned=False),
        policy=policy_field(policy, rules, [*narrowed.ignored, *pool.ignored]),
        substituted_from=pool.substituted.get(pick.model.id),
        dropped_pool_ids=pool.dropped,
    )
    if explored is not None:
        routing["exploration"] = True
    return _decision(chain, policy, routing, trail, len(order), pick, narrowed)


def exploration_pick(order: list[Contender], policy: PolicySnap, request: RoutingRequest,
                     share: float) -> Contender | None:
    """Return the unmeasured contender this request explores, or None.

    Under a policy with explore_unmeasured, a request whose ticket falls in the share goes to one of the
    eligible models that traffic has not measured (no route with latency samples), chosen by the ticket,
    so that it gains evidence. Never mid tool loop, and never when all or none are unmeasured."""
    if not policy.explore_unmeasured or request.tool_loop or request.ticket >= share:
        return None
    unmeasured = [c for c in order if not any(option.route.measured_latency for option in c.options)]
    if not unmeasured or len(unmeasured) == len(order):
        return None
    return unmeasured[min(len(unmeasured) - 1, int(request.ticket / share * len(unmeasured)))]


def _decide_pinned(request: RoutingRequest, classification: Classification, policy: PolicySnap,
                   snapshot: Snapshot, narrowed: Narrowed) -> Decision:
    requested = snapshot.models.get(request.model)
    if requested is None:
        raise RoutingError(f"The model '{request.model}' does not exist.", status=404, code="model_not_found",
                           param="model")
    if policy.require_pinned_in_pool and not _in_effective_pool(requested, policy, request):
        raise RoutingError(f"The model '{request.model}' is not in the routing pool this key may use.",
                           status=403, code="model_not_in_pool", param="model")
    model, substituted_from = requested, None
    if requested.variant_label is not None and not servable_routes(requested, snapshot, request, narrowed):
        base = snapshot.models.get(requested.base_id)
        if base is not None:
            model, substituted_from = base, requested.id

    trail = Trail()
    trail.add("pool_loaded", 1, 1, f"1 model in the pool: the request named {request.model}.")
    candidates, refusals = run_servable([Candidate(model, [])], trail, snapshot, request, narrowed)
    if not candidates:
        why = refusals.clause("it", singular=True) or "it has no route"
        raise trail.failure(f"{model.id} has no servable route: {why}.", status=503, code="no_servable_route")
    # A named model is always used: structured output is forwarded to it as written (and the answer's
    # JSON extracted) even where support is not verified; only auto insists on verified support.
    fit_request = replace(request, needs_structured_output=False) if request.needs_structured_output else request
    candidates, emptied = run_fit_steps(candidates, trail, fit_request, narrowed)
    if emptied == "capability_fit":
        raise trail.failure(f"{model.id} does not support what the request needs "
                            f"({', '.join(request_needs(fit_request))}).", status=400, code="model_lacks_capability",
                            param="model")
    if emptied is not None:
        raise trail.failure(f"{model.id} has no route that {_EMPTIED[emptied](fit_request, narrowed)}.", status=503,
                            code="no_servable_route")

    candidate = candidates[0]
    candidate.score, candidate.proxied = task_score(candidate.model, snapshot, classification.task)
    pick = _contender(candidate, request, classification, narrowed, {})
    chain = tuple(_link(pick, option) for option in pick.options[: narrowed.chain_length])
    _add_chain_step(trail, 1, chain)
    if substituted_from is not None:
        sentence = (f"The request named {substituted_from}, which has no servable route, so its base model "
                    f"{model.id} was used; a named model is always used.")
    else:
        sentence = f"The request named {model.id}; a named model is always used."
    rules = policy_rules(policy, narrowed, auto=False)
    if policy.require_pinned_in_pool:
        rules.insert(0, "require_pinned_in_pool")
    routing = _routing_object(
        request, classification, narrowed, pick, chain,
        decisiveness=None, basis="pinned", reasoning=sentence,
        alternatives=alternatives([pick], narrowed.objective),
        session=session_field(request, pick.model.id, snapshot, {}, set(), pinned=True),
        policy=policy_field(policy, rules, list(narrowed.ignored)),
        substituted_from=substituted_from,
        dropped_pool_ids=[],
    )
    return _decision(chain, policy, routing, trail, 1, pick, narrowed)


def _in_effective_pool(model: ModelSnap, policy: PolicySnap, request: RoutingRequest) -> bool:
    if not in_policy_pool(model, policy):
        return False
    asked = request.overrides.model_pool
    return not asked or model.id in asked or model.base_id in asked


def _contender(candidate: Candidate, request: RoutingRequest, classification: Classification, narrowed: Narrowed,
               thinking_memo: dict[tuple[str, bool, bool | None, bool, bool | None], Thinking]) -> Contender:
    model = candidate.model
    no_room = leaves_no_room_to_think(model, request.max_tokens)
    default_on, can_think, can_switch = None, True, True
    if model.reasoning == "switchable":
        default_on, floor, can_switch = _served_thinking(candidate.routes)
        can_think = request.max_tokens is None or request.max_tokens >= floor
    # The thinking outcome depends on the model only through these facts; memoised per decision.
    memo_key = (model.reasoning, no_room, default_on, can_think, can_switch)
    thinking = thinking_memo.get(memo_key)
    if thinking is None:
        wish = thinking_wish(model, request, classification, narrowed.objective)
        thinking = thinking_for(model, wish, default_on, can_think=can_think, can_switch=can_switch)
        thinking_memo[memo_key] = thinking
    reasoning = reasoning_tokens(model, thinking.thinks)
    answer = answer_tokens(request.max_tokens)
    basis = wait_basis(request.stream, thinking.thinks)
    objective, prefer_cache = narrowed.objective, narrowed.prefer_cache
    keyed = []
    for route, credential in candidate.routes:
        option = Option(route, credential, expected_cost_micros(route, request.prompt_tokens, answer + reasoning),
                        expected_wait_ms(route, basis, reasoning, answer))
        keyed.append((route_order_key(option, objective, prefer_cache), option))
    if len(keyed) > 1:
        keyed.sort(key=_first)
    options = [option for _, option in keyed]
    return Contender(model, options, candidate.score, candidate.proxied, thinking,
                     model.reasoning == "always_on" and no_room)


def _served_thinking(routes: list[tuple[RouteSnap, Credential]]) -> tuple[bool | None, int, bool | None]:
    """Return how a switchable model's routes serve its thinking: whether it thinks when sent no switch
    (None when they disagree), the smallest max_tokens with which every one of them can think, and whether
    they can switch it at all (None when some can and some cannot)."""
    dialect = routes[0][0].dialect
    if all(route.dialect == dialect for route, _ in routes):  # the usual case: one dialect
        traits = thinking_traits(dialect)
        if traits.native_switch:
            return traits.on_by_default, traits.min_max_tokens, True
        return traits.on_by_default, traits.min_max_tokens, _agreed({_can_switch(route) for route, _ in routes})
    every = {thinking_traits(route.dialect) for route, _ in routes}
    return (_agreed({t.on_by_default for t in every}), max(t.min_max_tokens for t in every),
            _agreed({_can_switch(route) for route, _ in routes}))


def _agreed(values: set[bool]) -> bool | None:
    return next(iter(values)) if len(values) == 1 else None


def _can_switch(route: RouteSnap) -> bool:
    """Return True when the route can switch a model's thinking: its dialect has a switch of its own, or the
    route declares one (a route that declares none is sent none, and its model runs its default)."""
    return thinking_traits(route.dialect).native_switch or route.thinking_switch != NO_THINKING_SWITCH


def _first(pair: tuple[Any, Option]) -> Any:
    return pair[0]


def _link(contender: Contender, option: Option) -> ChainLink:
    # A route that cannot switch thinking is sent no switch: the model runs its default there.
    thinking = contender.thinking.send if _can_switch(option.route) else None
    return ChainLink(route=option.route, model=contender.model, api_key=option.credential[0],
                     own_key=option.credential[1], thinking=thinking)


def _add_chain_step(trail: Trail, contenders: int, chain: tuple[ChainLink, ...]) -> None:
    models = len({link.model.id for link in chain})
    if models > 1:
        text = f"{models} models in the final chain: the pick, then its fallbacks."
    elif len(chain) > 1:
        text = "1 model in the final chain: the pick, then its other providers."
    else:
        text = "1 model in the final chain: the pick."
    trail.add("chain", contenders, models, text)


def _routing_object(request: RoutingRequest, classification: Classification, narrowed: Narrowed,
                    pick: Contender, chain: tuple[ChainLink, ...], *, decisiveness: float | None, basis: str,
                    reasoning: str, alternatives: list[dict[str, Any]], session: dict[str, Any] | None,
                    policy: dict[str, Any] | None, substituted_from: str | None,
                    dropped_pool_ids: list[str]) -> dict[str, Any]:
    model = pick.model
    first = pick.best
    routing: dict[str, Any] = {
        "task": classification.task,
        "complexity": classification.complexity,
        "estimated": classification.estimated,
        "decisiveness": decisiveness,
        "decisiveness_basis": basis,
        "forced_single": basis == "no_contest",
        "model": model.id,
        # Measured only on a score with a published source: an unverified one ranks, but is not evidence.
        "measured": pick.score is not None and not pick.proxied and classification.task not in model.unverified,
        "proxied": pick.proxied,
        "optimize_mode": narrowed.objective,
        "base_id": model.base_id,
        "variant_label": model.variant_label,
    }
    if substituted_from is not None:
        routing["variant_substituted"] = True
        routing["requested_variant"] = substituted_from
    routing["slow_tier"] = model.slow_tier
    if pick.thinking.mode is not None:  # absent only when the mode is not known
        routing["thinking"] = pick.thinking.mode
        if pick.thinking.reason is not None:
            routing["thinking_reason"] = pick.thinking.reason
    routing["expected_wait_ms"] = None if first.wait is None else round(first.wait)
    routing["wait_basis"] = wait_basis(request.stream, pick.thinking.thinks)
    routing["reasoning"] = reasoning
    routing["alternatives"] = alternatives
    if session is not None:
        routing["session"] = session
    routing["cache_fit"] = cache_fit(chain[0].route, narrowed.prefer_cache)
    if policy is not None:
        routing["policy"] = policy
    if dropped_pool_ids:
        routing["dropped_pool_ids"] = list(dropped_pool_ids)
    if classification.cached:
        routing["classification_cached"] = True
    return routing


def _decision(chain: tuple[ChainLink, ...], policy: PolicySnap, routing: dict[str, Any], trail: Trail,
              eligible: int, pick: Contender, narrowed: Narrowed) -> Decision:
    """Build the Decision; `eligible` counts the models that passed every eligibility step (the chain
    step's `in`), not the pool they were chosen from."""
    return Decision(
        chain=chain,
        policy=policy,
        routing=routing,
        filter_trail=tuple(trail.records),
        filter_trail_text=tuple(trail.texts),
        eligibility_pool_size=eligible,
        thinking=pick.thinking.send,
        first_token_timeout_ms=narrowed.first_token_timeout_ms,
        total_deadline_ms=narrowed.total_deadline_ms,
    )


_EMPTIED = {
    "context_fit": lambda request, narrowed: (
        f"fits the request's length ({request.prompt_tokens} prompt tokens plus "
        f"{request.max_tokens if request.max_tokens is not None else 256} for the answer)"),
    "capability_fit": lambda request, narrowed: f"supports what the request needs ({', '.join(request_needs(request))})",
    "cost_ceiling": lambda request, narrowed: f"stays under the {narrowed.max_cost_micros} micro-dollar ceiling",
}
