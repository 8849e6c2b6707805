"""routing.decide: filter steps, objectives, decisiveness, thinking, pinned models, policy narrowing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from routing.decision import Decision, RoutingError
from routing.engine import decide
from routing.engine.estimates import worst_case_cost_micros
from tests.routing.conftest import (
    decide_with,
    make_catalog,
    make_classification,
    make_latency,
    make_model,
    make_policy,
    make_request,
    make_route,
    make_snapshot,
)


def step(decision_or_error: object, name: str) -> dict:
    """Return the trail record of one step."""
    records = decision_or_error.filter_trail  # type: ignore[attr-defined]
    return next(record for record in records if record["step"] == name)


def step_text(decision_or_error: object, name: str) -> str:
    """Return the trail sentence of one step."""
    records = decision_or_error.filter_trail  # type: ignore[attr-defined]
    index = next(i for i, record in enumerate(records) if record["step"] == name)
    return decision_or_error.filter_trail_text[index]  # type: ignore[attr-defined]


def chain_ids(decision: object) -> list[str]:
    """Return the route ids of the chain, in order."""
    return [link.route.route_id for link in decision.chain]  # type: ignore[attr-defined]


REST_UNTIL = datetime(2026, 10, 12, 14, 3, 7, tzinfo=UTC).timestamp()


# --- pool_loaded -------------------------------------------------------------------------------------------


def test_pool_loaded_counts_whole_catalog_when_policy_pool_is_empty() -> None:
    decision = decide_with(make_catalog({"a": 0.9, "b": 0.8, "c": 0.7}))
    assert decision.filter_trail[0] == {"step": "pool_loaded", "in": 3, "out": 3}
    assert decision.filter_trail_text[0] == "3 models in the pool."


def test_pool_loaded_keeps_only_policy_pool() -> None:
    decision = decide_with(make_catalog({"a": 0.9, "b": 0.8, "c": 0.7}), policy=make_policy(pool=("b", "c")))
    assert step(decision, "pool_loaded")["out"] == 2
    assert decision.eligibility_pool_size == 2
    assert decision.routing["model"] == "b"


def test_pool_loaded_excludes_variants_when_policy_disallows_them() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.6}), make_model(id="a:turbo", benchmarks={"chat": 0.9})]
    snapshot = make_snapshot(models, [make_route(model_id="a"), make_route(model_id="a:turbo")])
    decision = decide_with(snapshot, policy=make_policy(allow_variants=False))
    assert step(decision, "pool_loaded")["out"] == 1
    assert decision.routing["model"] == "a"


def test_pool_loaded_policy_base_id_admits_its_variants() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.6}), make_model(id="a:turbo", benchmarks={"chat": 0.9}),
              make_model(id="b", benchmarks={"chat": 0.9})]
    routes = [make_route(model_id=m.id) for m in models]
    decision = decide_with(make_snapshot(models, routes), policy=make_policy(pool=("a",)))
    assert step(decision, "pool_loaded")["out"] == 2
    assert decision.routing["model"] == "a:turbo"


def test_pool_loaded_request_pool_drops_unknown_and_outside_ids() -> None:
    snapshot = make_catalog({"a": 0.9, "b": 0.8, "c": 0.7})
    request = make_request(routing={"model_pool": ("b", "c", "nope")})
    decision = decide_with(snapshot, request, policy=make_policy(pool=("a", "b")))
    assert step(decision, "pool_loaded") == {"step": "pool_loaded", "in": 3, "out": 1,
                                             "dropped_pool_ids": ["c", "nope"]}
    assert decision.routing["dropped_pool_ids"] == ["c", "nope"]
    assert decision.routing["model"] == "b"


def test_pool_loaded_request_pool_with_no_usable_id_is_ignored_and_reported() -> None:
    request = make_request(routing={"model_pool": ("nope",)})
    decision = decide_with(make_catalog({"a": 0.9, "b": 0.8}), request)
    assert step(decision, "pool_loaded")["out"] == 2
    assert "routing.model_pool: none of its models are in the policy's pool" in decision.routing["policy"]["ignored"]


def test_pool_loaded_request_variant_without_route_is_substituted_by_base() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.7}), make_model(id="a:fp8", benchmarks={"chat": 0.7}),
              make_model(id="b", benchmarks={"chat": 0.9})]
    snapshot = make_snapshot(models, [make_route(model_id="a"), make_route(model_id="b")])
    decision = decide_with(snapshot, make_request(routing={"model_pool": ("a:fp8",)}))
    assert decision.routing["model"] == "a"
    assert decision.routing["variant_substituted"] is True
    assert decision.routing["requested_variant"] == "a:fp8"


# --- servable ----------------------------------------------------------------------------------------------


def test_servable_removes_models_without_credentials() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a", env_credential=False), make_route(model_id="b")]
    decision = decide_with(make_snapshot(models, routes))
    assert step(decision, "servable") == {"step": "servable", "in": 2, "out": 1}
    assert step_text(decision, "servable") == (
        "1 of 2 models has a servable route; the others lack a provider credential.")
    assert decision.routing["model"] == "b"


def test_servable_uses_the_projects_own_provider_key() -> None:
    snapshot = make_snapshot([make_model(id="a", benchmarks={"chat": 0.9})],
                             [make_route(model_id="a", env_credential=False)],
                             provider_keys={7: {"groq": "sk-own"}})
    decision = decide_with(snapshot, make_request(project_id=7))
    assert (decision.chain[0].api_key, decision.chain[0].own_key) == ("sk-own", True)


def test_one_snapshot_serves_each_project_health_and_policy_on_its_own_terms() -> None:
    """Servable routes are worked out once per snapshot and project: a later decision on the same
    snapshot still sees its own project's key, its own unhealthy routes and its own provider policy."""
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a", env_credential=False), make_route(model_id="a", provider="together"),
              make_route(model_id="b")]
    snapshot = make_snapshot(models, routes, provider_keys={7: {"groq": "sk-own"}})
    own = decide_with(snapshot, make_request(project_id=7))
    assert ("groq/a", "sk-own") in [(link.route.route_id, link.api_key) for link in own.chain]
    other = decide_with(snapshot, make_request(project_id=8))
    assert "groq/a" not in chain_ids(other) and "together/a" in chain_ids(other)
    sick = decide_with(snapshot, make_request(project_id=8, resting_routes={"together/a": REST_UNTIL}))
    assert chain_ids(sick) == ["groq/b"]
    assert step_text(sick, "servable") == (
        "1 of 2 models has a servable route; the others lack a provider credential, or have routes resting "
        "after repeated failures (together/a until 2026-10-12T14:03:07Z).")
    again = decide_with(snapshot, make_request(project_id=7), policy=make_policy(allowed_providers=("together",)))
    assert chain_ids(again) == ["together/a"]


def test_servable_says_a_route_is_resting_after_failures_and_until_when() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    snapshot = make_snapshot(models, [make_route(model_id="a"), make_route(model_id="b")])
    decision = decide_with(snapshot, make_request(resting_routes={"groq/a": REST_UNTIL}))
    assert decision.routing["model"] == "b"
    assert step(decision, "servable") == {"step": "servable", "in": 2, "out": 1,
                                          "resting_until": {"groq/a": "2026-10-12T14:03:07Z"}}
    assert step_text(decision, "servable") == (
        "1 of 2 models has a servable route; the others have routes resting after repeated failures "
        "(groq/a until 2026-10-12T14:03:07Z).")


def test_a_named_model_whose_only_route_rests_is_refused_for_that_reason() -> None:
    snapshot = make_snapshot([make_model(id="a")], [make_route(model_id="a")])
    with pytest.raises(RoutingError) as caught:
        decide_with(snapshot, make_request(model="a", resting_routes={"groq/a": REST_UNTIL}))
    assert (caught.value.status, caught.value.code) == (503, "no_servable_route")
    assert caught.value.message == (
        "a has no servable route: it has routes resting after repeated failures "
        "(groq/a until 2026-10-12T14:03:07Z).")
    assert "credential" not in caught.value.message
    assert caught.value.filter_trail_text[-1] == (
        "0 of 1 model have a servable route; it has routes resting after repeated failures "
        "(groq/a until 2026-10-12T14:03:07Z).")


def test_auto_with_every_route_resting_says_so() -> None:
    with pytest.raises(RoutingError) as caught:
        decide_with(make_catalog({"a": 0.9, "b": 0.8}),
                    make_request(resting_routes={"groq/a": REST_UNTIL, "groq/b": REST_UNTIL + 30}))
    assert caught.value.message == (
        "No model in the pool has a servable route: they have routes resting after repeated failures "
        "(groq/a until 2026-10-12T14:03:07Z, groq/b until 2026-10-12T14:03:37Z).")


def test_servable_keeps_only_policy_allowed_providers() -> None:
    snapshot = make_snapshot([make_model(id="a", benchmarks={"chat": 0.9})],
                             [make_route(model_id="a", provider="groq", price_input=0.1),
                              make_route(model_id="a", provider="together")])
    decision = decide_with(snapshot, policy=make_policy(allowed_providers=("together",)))
    assert chain_ids(decision) == ["together/a"]
    assert "allowed_providers: together" in decision.routing["policy"]["rules"]


def test_servable_request_narrows_allowed_providers() -> None:
    snapshot = make_snapshot([make_model(id="a", benchmarks={"chat": 0.9})],
                             [make_route(model_id="a", provider="groq"), make_route(model_id="a", provider="together")])
    decision = decide_with(snapshot, make_request(routing={"allowed_providers": ("groq",)}))
    assert chain_ids(decision) == ["groq/a"]


def test_servable_request_provider_outside_policy_is_ignored_and_reported() -> None:
    snapshot = make_snapshot([make_model(id="a", benchmarks={"chat": 0.9})],
                             [make_route(model_id="a", provider="groq"), make_route(model_id="a", provider="openai")])
    decision = decide_with(snapshot, make_request(routing={"allowed_providers": ("openai",)}),
                           policy=make_policy(allowed_providers=("groq",)))
    assert chain_ids(decision) == ["groq/a"]
    assert decision.routing["policy"]["ignored"] == ["routing.allowed_providers: openai not allowed by the policy"]


def test_servable_keeps_only_routes_in_policy_data_regions() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a", data_regions=("us",)), make_route(model_id="b", data_regions=("eu", "us"))]
    decision = decide_with(make_snapshot(models, routes), policy=make_policy(data_regions=("eu",)))
    assert decision.routing["model"] == "b"
    assert "a provider in the allowed data regions" in step_text(decision, "servable")


def test_servable_simulated_route_needs_simulation_enabled() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a", provider="simulated", provider_kind="simulated"), make_route(model_id="b")]
    decision = decide_with(make_snapshot(models, routes, simulated_enabled=False))
    assert decision.routing["model"] == "b"


# --- context_fit -------------------------------------------------------------------------------------------


def test_context_fit_removes_models_whose_window_is_too_small() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a", context_window=1_000), make_route(model_id="b")]
    decision = decide_with(make_snapshot(models, routes), make_request(prompt_tokens=800))
    assert step(decision, "context_fit") == {"step": "context_fit", "in": 2, "out": 1}
    assert step_text(decision, "context_fit") == "1 of 2 models fits the request's length."


def test_context_fit_sentence_matches_the_spec_wording() -> None:
    models = [make_model(id=f"m{i}", benchmarks={"chat": 0.9}) for i in range(3)]
    routes = [make_route(model_id="m0", context_window=500), make_route(model_id="m1"), make_route(model_id="m2")]
    decision = decide_with(make_snapshot(models, routes), make_request(prompt_tokens=400))
    assert step_text(decision, "context_fit") == "2 of 3 models fit the request's length."


def test_context_fit_counts_max_tokens_instead_of_the_answer_reserve() -> None:
    snapshot = make_catalog({"a": 0.9}, context_window=1_000)
    decision = decide_with(snapshot, make_request(prompt_tokens=800, max_tokens=100))
    assert step(decision, "context_fit")["out"] == 1


def test_context_fit_removes_routes_whose_output_limit_is_below_max_tokens() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a", max_output_tokens=1_000), make_route(model_id="b")]
    decision = decide_with(make_snapshot(models, routes), make_request(max_tokens=2_000))
    assert decision.routing["model"] == "b"


# --- capability_fit ----------------------------------------------------------------------------------------


def test_capability_fit_requires_tools_when_the_request_has_them() -> None:
    models = [make_model(id="a", supports_tools=False, benchmarks={"chat": 0.9}),
              make_model(id="b", benchmarks={"chat": 0.8})]
    snapshot = make_snapshot(models, [make_route(model_id="a"), make_route(model_id="b")])
    decision = decide_with(snapshot, make_request(needs_tools=True))
    assert step(decision, "capability_fit") == {"step": "capability_fit", "in": 2, "out": 1}
    assert step_text(decision, "capability_fit") == "1 of 2 models supports what the request needs (tools)."
    assert decision.routing["model"] == "b"


def test_capability_fit_requires_verified_structured_output() -> None:
    models = [make_model(id="a", verified_structured_output=False, benchmarks={"chat": 0.9}),
              make_model(id="b", benchmarks={"chat": 0.8})]
    snapshot = make_snapshot(models, [make_route(model_id="a"), make_route(model_id="b")])
    decision = decide_with(snapshot, make_request(needs_structured_output=True))
    assert decision.routing["model"] == "b"


def test_capability_fit_requires_vision_for_images() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}),
              make_model(id="b", supports_vision=True, benchmarks={"chat": 0.8})]
    snapshot = make_snapshot(models, [make_route(model_id="a"), make_route(model_id="b")])
    decision = decide_with(snapshot, make_request(needs_vision=True))
    assert decision.routing["model"] == "b"


def test_capability_fit_is_omitted_when_the_request_needs_nothing() -> None:
    decision = decide_with(make_catalog({"a": 0.9}))
    assert [record["step"] for record in decision.filter_trail] == [
        "pool_loaded", "servable", "context_fit", "preset_eligibility", "chain"]


# --- cost_ceiling ------------------------------------------------------------------------------------------


def test_cost_ceiling_removes_models_whose_worst_case_is_over_it() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a", price_output=20.0), make_route(model_id="b", price_output=2.0)]
    request = make_request(max_tokens=100, routing={"max_cost_micros": 1_000})
    decision = decide_with(make_snapshot(models, routes), request)
    assert step(decision, "cost_ceiling") == {"step": "cost_ceiling", "in": 2, "out": 1, "max_cost_micros": 1_000}
    assert step_text(decision, "cost_ceiling") == "1 of 2 models stays under the 1000 micro-dollar ceiling."
    assert decision.routing["model"] == "b"


def test_cost_ceiling_worst_case_spends_the_routes_output_limit_without_max_tokens() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a", max_output_tokens=8_192), make_route(model_id="b", max_output_tokens=1_000)]
    decision = decide_with(make_snapshot(models, routes), policy=make_policy(max_cost_micros=10_000))
    assert decision.routing["model"] == "b"


def test_cost_ceiling_scales_with_the_cost_multiplier() -> None:
    request = make_request(max_tokens=100, cost_multiplier=2.0, routing={"max_cost_micros": 500})
    with pytest.raises(RoutingError) as caught:
        decide_with(make_catalog({"a": 0.9}), request)
    assert caught.value.code == "no_eligible_model"
    assert "500 micro-dollar ceiling" in caught.value.message


def test_cost_ceiling_is_never_exceeded_by_any_chain_link() -> None:
    models = [make_model(id=f"m{i}", benchmarks={"chat": 0.9 - i / 100}) for i in range(4)]
    routes = [make_route(model_id=m.id, provider=provider, price_output=price)
              for m in models for provider, price in (("groq", 1.0 + len(m.id)), ("together", 30.0))]
    request = make_request(max_tokens=200, routing={"max_cost_micros": 2_000, "chain_length": 8})
    decision = decide_with(make_snapshot(models, routes), request)
    assert len(decision.chain) == 4
    assert all(worst_case_cost_micros(link.route, request) <= 2_000 for link in decision.chain)


def test_cost_ceiling_request_lowers_the_policy_ceiling() -> None:
    request = make_request(max_tokens=100, routing={"max_cost_micros": 1_000})
    decision = decide_with(make_catalog({"a": 0.9}), request, policy=make_policy(max_cost_micros=5_000))
    assert step(decision, "cost_ceiling")["max_cost_micros"] == 1_000
    assert "max_cost_micros: 1000" in decision.routing["policy"]["rules"]


def test_cost_ceiling_request_above_the_policy_is_ignored_and_reported() -> None:
    request = make_request(max_tokens=100, routing={"max_cost_micros": 9_000})
    decision = decide_with(make_catalog({"a": 0.9}), request, policy=make_policy(max_cost_micros=5_000))
    assert step(decision, "cost_ceiling")["max_cost_micros"] == 5_000
    assert "routing.max_cost_micros: higher than the policy's" in decision.routing["policy"]["ignored"]


# --- preset_eligibility ------------------------------------------------------------------------------------


def test_preset_eligibility_applies_the_standard_floor() -> None:
    decision = decide_with(make_catalog({"a": 0.9, "b": 0.5, "c": 0.6}))
    assert step(decision, "preset_eligibility") == {"step": "preset_eligibility", "in": 3, "out": 2,
                                                    "preset": "standard"}
    assert step_text(decision, "preset_eligibility") == (
        "2 of 3 models meet the standard quality floor for this task.")


def test_eligibility_pool_size_counts_the_models_that_passed_eligibility() -> None:
    decision = decide_with(make_catalog({"a": 0.9, "b": 0.5, "c": 0.6}))
    assert step(decision, "pool_loaded")["out"] == 3
    assert decision.eligibility_pool_size == step(decision, "chain")["in"] == 2


def test_eligibility_pool_size_of_a_named_model_is_one() -> None:
    decision = decide_with(make_catalog({"a": 0.9, "b": 0.8}), make_request(model="b"))
    assert decision.eligibility_pool_size == step(decision, "chain")["in"] == 1


def test_preset_eligibility_unmeasured_model_passes_basic() -> None:
    decision = decide_with(make_catalog({"a": None}), policy=make_policy(quality_floor="basic"))
    assert decision.routing["model"] == "a"
    assert decision.routing["measured"] is False


def test_preset_eligibility_unmeasured_model_fails_standard() -> None:
    with pytest.raises(RoutingError) as caught:
        decide_with(make_catalog({"a": None}))
    assert (caught.value.status, caught.value.code) == (503, "no_eligible_model")
    assert caught.value.message == "No model in the pool meets the standard quality floor for this task."


def test_preset_eligibility_judges_a_model_without_task_score_on_overall() -> None:
    snapshot = make_snapshot([make_model(id="a", benchmarks={"overall": 0.6, "coding": 0.9})],
                             [make_route(model_id="a")])
    decision = decide_with(snapshot)
    assert (decision.routing["proxied"], decision.routing["measured"]) == (True, False)


def test_preset_eligibility_variant_inherits_base_benchmarks() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.8}), make_model(id="a:fp8")]
    decision = decide_with(make_snapshot(models, [make_route(model_id="a:fp8")]),
                           policy=make_policy(quality_floor="strict"))
    assert decision.routing["model"] == "a:fp8"
    assert decision.routing["measured"] is True


def test_preset_eligibility_request_may_raise_the_floor() -> None:
    decision = decide_with(make_catalog({"a": 0.9, "b": 0.6}), make_request(routing={"quality_floor": "strict"}))
    assert step(decision, "preset_eligibility")["preset"] == "strict"
    assert step(decision, "preset_eligibility")["out"] == 1
    assert "quality_floor: strict" in decision.routing["policy"]["rules"]


def test_preset_eligibility_looser_request_floor_is_ignored_and_reported() -> None:
    decision = decide_with(make_catalog({"a": 0.9, "b": 0.45}), make_request(routing={"quality_floor": "basic"}))
    assert step(decision, "preset_eligibility")["preset"] == "standard"
    assert decision.routing["policy"]["ignored"] == [
        "routing.quality_floor: basic is looser than the policy's standard"]


def test_preset_eligibility_uses_the_policys_floor_for_the_task() -> None:
    policy = make_policy(quality_floor_by_task={"coding": "strict"})
    decision = decide_with(make_catalog({"a": 0.9, "b": 0.6}, task="coding"),
                           classification=make_classification("coding"), policy=policy)
    assert step(decision, "preset_eligibility") == {"step": "preset_eligibility", "in": 2, "out": 1,
                                                    "preset": "strict"}


# --- empty steps and the chain step ------------------------------------------------------------------------


def test_empty_step_raises_no_eligible_model_with_the_trail_so_far() -> None:
    with pytest.raises(RoutingError) as caught:
        decide_with(make_catalog({"a": 0.9}, context_window=500), make_request(prompt_tokens=400))
    error = caught.value
    assert (error.status, error.code) == (503, "no_eligible_model")
    assert error.filter_trail[-1] == {"step": "context_fit", "in": 1, "out": 0}
    assert "fits the request's length" in error.message
    assert error.filter_trail_text[-1] == "0 of 1 model fit the request's length."


def test_empty_servable_step_names_credentials() -> None:
    with pytest.raises(RoutingError) as caught:
        decide_with(make_catalog({"a": 0.9}, env_credential=False))
    assert caught.value.filter_trail[-1]["step"] == "servable"
    assert "credential" in caught.value.message


def test_chain_step_counts_models_in_the_chain() -> None:
    decision = decide_with(make_catalog({"a": 0.9, "b": 0.8, "c": 0.7}))
    assert decision.filter_trail[-1] == {"step": "chain", "in": 3, "out": 3}
    assert decision.filter_trail_text[-1] == "3 models in the final chain: the pick, then its fallbacks."


def test_chain_step_is_singular_for_one_model() -> None:
    decision = decide_with(make_catalog({"a": 0.9}))
    assert decision.filter_trail_text[-1] == "1 model in the final chain: the pick."


# --- chain -------------------------------------------------------------------------------------------------


def test_chain_orders_pick_then_its_other_providers_then_other_models() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a", provider="groq", price_input=3.0),
              make_route(model_id="a", provider="together", price_input=1.0),
              make_route(model_id="b", provider="groq")]
    decision = decide_with(make_snapshot(models, routes), make_request(routing={"optimize": "quality"}))
    assert chain_ids(decision) == ["together/a", "groq/a", "groq/b"]


def test_chain_lists_only_the_best_route_of_other_models() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a"), make_route(model_id="b", provider="groq", price_input=3.0),
              make_route(model_id="b", provider="together")]
    decision = decide_with(make_snapshot(models, routes), make_request(routing={"optimize": "quality"}))
    assert chain_ids(decision) == ["groq/a", "together/b"]


def test_chain_puts_simulated_routes_after_real_ones_of_the_same_model() -> None:
    routes = [make_route(model_id="a", provider="simulated", provider_kind="simulated", price_input=0.0),
              make_route(model_id="a", provider="groq", price_input=5.0)]
    decision = decide_with(make_snapshot([make_model(id="a", benchmarks={"chat": 0.9})], routes))
    assert chain_ids(decision) == ["groq/a", "simulated/a"]


def test_chain_length_is_the_lower_of_policy_and_request() -> None:
    snapshot = make_catalog({"a": 0.9, "b": 0.8, "c": 0.7})
    decision = decide_with(snapshot, make_request(routing={"chain_length": 2}), policy=make_policy(chain_length=3))
    assert len(decision.chain) == 2


def test_chain_length_longer_in_the_request_is_ignored() -> None:
    snapshot = make_catalog({"a": 0.9, "b": 0.8, "c": 0.7})
    decision = decide_with(snapshot, make_request(routing={"chain_length": 9}), policy=make_policy(chain_length=2))
    assert len(decision.chain) == 2
    assert "routing.chain_length: longer than the policy's" in decision.routing["policy"]["ignored"]


def test_chain_in_a_tool_loop_keeps_only_the_picks_routes() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a", provider="groq"), make_route(model_id="a", provider="together"),
              make_route(model_id="b")]
    decision = decide_with(make_snapshot(models, routes), make_request(tool_loop=True))
    assert {link.model.id for link in decision.chain} == {"a"}
    assert len(decision.chain) == 2


# --- objectives --------------------------------------------------------------------------------------------


def test_quality_objective_ranks_by_task_score() -> None:
    decision = decide_with(make_catalog({"a": 0.7, "b": 0.9, "c": 0.8}), make_request(routing={"optimize": "quality"}))
    assert [alt["model"] for alt in decision.routing["alternatives"]] == ["b", "c", "a"]


def test_quality_objective_puts_unmeasured_models_last() -> None:
    decision = decide_with(make_catalog({"a": None, "b": 0.3}), make_request(routing={"optimize": "quality"}),
                           policy=make_policy(quality_floor="none"))
    assert decision.routing["model"] == "b"


def test_quality_objective_ranks_a_proxied_model_on_overall() -> None:
    models = [make_model(id="a", benchmarks={"overall": 0.95}), make_model(id="b", benchmarks={"chat": 0.9})]
    snapshot = make_snapshot(models, [make_route(model_id="a"), make_route(model_id="b")])
    decision = decide_with(snapshot, make_request(routing={"optimize": "quality"}))
    assert decision.routing["model"] == "a"
    assert decision.routing["proxied"] is True


def test_cost_objective_ranks_by_expected_cost() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a", price_output=3.0), make_route(model_id="b", price_output=1.0)]
    decision = decide_with(make_snapshot(models, routes), make_request(routing={"optimize": "cost"}))
    assert decision.routing["model"] == "b"
    assert [alt["expected_cost_micros"] for alt in decision.routing["alternatives"]] == [500, 1_300]


def test_cost_objective_counts_the_reasoning_a_thinking_model_will_do() -> None:
    models = [make_model(id="thinker", reasoning="switchable", typical_reasoning_tokens=1_000,
                         benchmarks={"coding": 0.9}),
              make_model(id="direct", benchmarks={"coding": 0.9})]
    routes = [make_route(model_id="thinker", price_output=1.0), make_route(model_id="direct", price_output=3.0)]
    decision = decide_with(make_snapshot(models, routes), make_request(routing={"optimize": "cost"}),
                           classification=make_classification("coding"))
    assert decision.routing["model"] == "direct"
    assert decision.routing["alternatives"][1]["expected_cost_micros"] == 100 + 1_400


def test_latency_objective_ranks_by_expected_wait() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a", latency=make_latency(900)), make_route(model_id="b", latency=make_latency(300))]
    decision = decide_with(make_snapshot(models, routes), make_request(stream=True, routing={"optimize": "latency"}))
    assert decision.routing["model"] == "b"
    assert decision.routing["expected_wait_ms"] == 300


def test_latency_objective_puts_unmeasured_routes_last() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a", latency=None), make_route(model_id="b", latency=make_latency(5_000))]
    decision = decide_with(make_snapshot(models, routes), make_request(routing={"optimize": "latency"}))
    assert decision.routing["model"] == "b"


def balanced_snapshot() -> object:
    """Three models: a best quality but dear and slow, b cheapest and fast, c in between and fast."""
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.7}),
              make_model(id="c", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a", price_output=4.0, latency=make_latency(2_000)),
              make_route(model_id="b", price_output=1.0), make_route(model_id="c", price_output=2.5)]
    return make_snapshot(models, routes)


def test_balanced_objective_ranks_by_utility() -> None:
    decision = decide_with(balanced_snapshot())  # type: ignore[arg-type]
    assert [(alt["model"], alt["utility"]) for alt in decision.routing["alternatives"]] == [
        ("c", 0.625), ("a", 0.5), ("b", 0.5)]


def test_balanced_objective_counts_a_missing_latency_as_worst() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.8}), make_model(id="b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a", latency=None), make_route(model_id="b", latency=make_latency(9_000))]
    decision = decide_with(make_snapshot(models, routes))
    assert decision.routing["model"] == "b"
    assert decision.routing["decisiveness"] == 0.25


# --- decisiveness ------------------------------------------------------------------------------------------


def test_decisiveness_on_quality_is_the_relative_margin() -> None:
    decision = decide_with(make_catalog({"a": 0.8, "b": 0.6}), make_request(routing={"optimize": "quality"}))
    assert (decision.routing["decisiveness"], decision.routing["decisiveness_basis"]) == (0.25, "lead")
    assert decision.routing["reasoning"] == "Highest chat score among 2 eligible models (0.80 vs 0.60 for b)."


def test_decisiveness_on_cost_is_the_relative_saving() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a", price_output=2.0), make_route(model_id="b", price_output=1.0)]
    decision = decide_with(make_snapshot(models, routes), make_request(routing={"optimize": "cost"}))
    assert decision.routing["decisiveness"] == round((900 - 500) / 900, 3)


def test_decisiveness_on_latency_is_the_relative_wait_saved() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a", latency=make_latency(400)), make_route(model_id="b", latency=make_latency(1_000))]
    decision = decide_with(make_snapshot(models, routes), make_request(stream=True, routing={"optimize": "latency"}))
    assert decision.routing["decisiveness"] == 0.6


def test_decisiveness_on_balanced_is_the_utility_difference() -> None:
    decision = decide_with(balanced_snapshot())  # type: ignore[arg-type]
    assert decision.routing["decisiveness"] == 0.125
    assert decision.routing["reasoning"] == "Highest balanced utility among 3 eligible models (0.63 vs 0.50 for a)."


def test_decisiveness_is_unmeasured_when_the_runner_up_has_no_value() -> None:
    decision = decide_with(make_catalog({"a": 0.5, "b": None}), make_request(routing={"optimize": "quality"}),
                           policy=make_policy(quality_floor="basic"))
    routing = decision.routing
    assert (routing["decisiveness"], routing["decisiveness_basis"], routing["forced_single"]) == (
        None, "unmeasured", False)


def test_decisiveness_is_no_contest_when_one_model_qualifies() -> None:
    decision = decide_with(make_catalog({"a": 0.9, "b": 0.3}))
    routing = decision.routing
    assert (routing["decisiveness"], routing["decisiveness_basis"], routing["forced_single"]) == (
        None, "no_contest", True)
    assert routing["reasoning"] == "a was the only model of 2 in the pool that met every requirement."


def test_decisiveness_is_zero_on_an_exact_tie_broken_by_id() -> None:
    decision = decide_with(make_catalog({"b": 0.8, "a": 0.8}), make_request(routing={"optimize": "quality"}))
    assert (decision.routing["model"], decision.routing["decisiveness"]) == ("a", 0.0)


# --- thinking ----------------------------------------------------------------------------------------------


def thinking_decision(model_reasoning: str, *, task: str = "chat", complexity: str = "standard",
                      dialects: tuple[str, ...] = ("openai",), switches: tuple[str, ...] | None = None,
                      **request_fields: object) -> Decision:
    """Decide for one model with the given reasoning, served in these dialects (routes declaring these
    thinking switches, reasoning_effort by default)."""
    model = make_model(id="m", reasoning=model_reasoning, typical_reasoning_tokens=1_000,
                       benchmarks={task: 0.9})
    switches = switches or ("reasoning_effort",) * len(dialects)
    routes = [make_route(model_id="m", provider=f"p{i}", dialect=dialect, thinking_switch=switch)
              for i, (dialect, switch) in enumerate(zip(dialects, switches, strict=True))]
    return decide_with(make_snapshot([model], routes), make_request(**request_fields),
                       classification=make_classification(task, complexity))


def thinking_of(model_reasoning: str, **fields: object) -> tuple[dict, bool | None]:
    """Decide as thinking_decision does; return (routing, what to send)."""
    decision = thinking_decision(model_reasoning, **fields)  # type: ignore[arg-type]
    return decision.routing, decision.thinking


def test_thinking_off_when_max_tokens_leaves_no_room() -> None:
    routing, send = thinking_of("switchable", max_tokens=500)
    assert (routing["thinking"], routing["thinking_reason"], send) == ("off", "max_tokens", False)


def test_thinking_off_in_latency_mode() -> None:
    routing, send = thinking_of("switchable", routing={"optimize": "latency"})
    assert (routing["thinking"], routing["thinking_reason"], send) == ("off", "latency_mode", False)


def test_thinking_off_for_an_easy_prompt() -> None:
    routing, send = thinking_of("switchable", complexity="easy")
    assert (routing["thinking"], routing["thinking_reason"], send) == ("off", "easy_prompt", False)


def test_thinking_on_when_the_task_needs_it() -> None:
    routing, send = thinking_of("switchable", task="maths")
    assert (routing["thinking"], routing["thinking_reason"], send) == ("on", "task_needs_thinking", True)


def test_thinking_left_to_the_model_for_hard_reasoning() -> None:
    routing, send = thinking_of("switchable", task="reasoning", complexity="hard")
    assert (routing["thinking"], routing["thinking_reason"], send) == ("on", "cheaper_with_thinking", None)


def test_thinking_has_no_reason_when_auto_has_no_rule() -> None:
    routing, send = thinking_of("switchable")
    assert (routing["thinking"], "thinking_reason" in routing, send) == ("on", False, None)


def test_thinking_left_to_a_model_whose_default_is_off_is_off() -> None:
    # Claude, served over the Anthropic dialect, thinks only when the request enables it.
    routing, send = thinking_of("switchable", dialects=("anthropic",))
    assert (routing["thinking"], "thinking_reason" in routing, send) == ("off", False, None)
    assert routing["wait_basis"] == "end_to_end"
    routing, _ = thinking_of("switchable", dialects=("anthropic",), stream=True)
    assert routing["wait_basis"] == "first_token"  # it does not think, so no reasoning comes first


def test_thinking_asked_of_a_model_whose_default_is_off_is_on() -> None:
    routing, send = thinking_of("switchable", dialects=("anthropic",), task="maths")
    assert (routing["thinking"], routing["thinking_reason"], send) == ("on", "task_needs_thinking", True)


def test_thinking_is_absent_when_the_routes_of_a_model_disagree_on_its_default() -> None:
    routing, send = thinking_of("switchable", dialects=("openai", "anthropic"))
    assert ("thinking" in routing, "thinking_reason" in routing, send) == (False, False, None)


def test_thinking_is_absent_for_a_model_whose_reasoning_is_unmeasured() -> None:
    for fields in ({}, {"extended_thinking": True}, {"extended_thinking": False}):
        routing, send = thinking_of("unknown", **fields)  # type: ignore[arg-type]
        assert ("thinking" in routing, "thinking_reason" in routing, send) == (False, False, None)


def test_thinking_is_off_when_max_tokens_has_no_room_for_the_routes_minimum_budget() -> None:
    # Anthropic's smallest thinking budget (1024) plus room for an answer does not fit in 1000 tokens,
    # and max_tokens is never raised: thinking is off, for that reason.
    routing, send = thinking_of("switchable", dialects=("anthropic",), extended_thinking=True, max_tokens=1000)
    assert (routing["thinking"], routing["thinking_reason"], send) == ("off", "max_tokens", False)
    routing, send = thinking_of("switchable", dialects=("anthropic",), extended_thinking=True, max_tokens=1280)
    assert (routing["thinking"], "thinking_reason" in routing, send) == ("on", False, True)
    routing, send = thinking_of("switchable", dialects=("openai",), extended_thinking=True, max_tokens=1000)
    assert (routing["thinking"], "thinking_reason" in routing, send) == ("on", False, True)


def test_thinking_model_ignores_off_asked_by_the_client() -> None:
    routing, send = thinking_of("always_on", extended_thinking=False)
    assert (routing["thinking"], routing["thinking_reason"], send) == ("on", "model_ignores_off", None)


def test_thinking_model_ignores_off_asked_by_auto() -> None:
    routing, send = thinking_of("always_on", complexity="easy")
    assert (routing["thinking"], routing["thinking_reason"], send) == ("on", "model_ignores_off", None)


def test_thinking_route_cannot_think_when_the_client_asked_for_it() -> None:
    routing, send = thinking_of("none", extended_thinking=True)
    assert (routing["thinking"], routing["thinking_reason"], send) == ("off", "route_cannot_think", None)


def test_thinking_reason_is_omitted_when_the_client_got_what_it_asked() -> None:
    routing, send = thinking_of("switchable", task="maths", extended_thinking=False)
    assert (routing["thinking"], "thinking_reason" in routing, send) == ("off", False, False)


# --- wait basis --------------------------------------------------------------------------------------------


def test_wait_basis_end_to_end_when_not_streamed() -> None:
    routing, _ = thinking_of("none")
    assert (routing["wait_basis"], routing["expected_wait_ms"]) == ("end_to_end", 500 + 4_000)


def test_wait_basis_first_token_when_streamed_without_thinking() -> None:
    routing, _ = thinking_of("none", stream=True)
    assert (routing["wait_basis"], routing["expected_wait_ms"]) == ("first_token", 500)


def test_wait_basis_first_answer_token_when_streamed_with_thinking() -> None:
    routing, _ = thinking_of("always_on", stream=True)
    assert (routing["wait_basis"], routing["expected_wait_ms"]) == ("first_answer_token", 500 + 10_000)


def test_expected_wait_is_null_when_the_route_has_no_latency() -> None:
    decision = decide_with(make_catalog({"a": 0.9}, latency=None))
    assert decision.routing["expected_wait_ms"] is None


# --- always_on demotion ------------------------------------------------------------------------------------


def demotion_snapshot() -> object:
    """An always-reasoning model with the best score, and an ordinary one."""
    models = [make_model(id="gpt-oss", reasoning="always_on", typical_reasoning_tokens=1_000,
                         benchmarks={"chat": 0.95}),
              make_model(id="plain", benchmarks={"chat": 0.8})]
    return make_snapshot(models, [make_route(model_id="gpt-oss"), make_route(model_id="plain")])


def test_always_on_model_goes_behind_the_others_when_max_tokens_leaves_no_room() -> None:
    decision = decide_with(demotion_snapshot(), make_request(max_tokens=600,  # type: ignore[arg-type]
                                                             routing={"optimize": "quality"}))
    assert [link.model.id for link in decision.chain] == ["plain", "gpt-oss"]
    assert "gpt-oss was placed behind the others because max_tokens leaves too little room" in (
        decision.routing["reasoning"])


def test_always_on_model_keeps_its_rank_when_max_tokens_leaves_room() -> None:
    decision = decide_with(demotion_snapshot(), make_request(max_tokens=2_000,  # type: ignore[arg-type]
                                                             routing={"optimize": "quality"}))
    assert decision.routing["model"] == "gpt-oss"


# --- pinned ------------------------------------------------------------------------------------------------


def test_pinned_unknown_model_is_not_found() -> None:
    with pytest.raises(RoutingError) as caught:
        decide_with(make_catalog({"a": 0.9}), make_request(model="nope"))
    assert (caught.value.status, caught.value.code, caught.value.param) == (404, "model_not_found", "model")


def test_pinned_model_is_used_with_only_its_own_routes() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.5}), make_model(id="b", benchmarks={"chat": 0.9})]
    routes = [make_route(model_id="a", provider="groq"), make_route(model_id="a", provider="together"),
              make_route(model_id="b")]
    decision = decide_with(make_snapshot(models, routes), make_request(model="a"))
    assert {link.model.id for link in decision.chain} == {"a"}
    assert len(decision.chain) == 2
    routing = decision.routing
    assert (routing["decisiveness"], routing["decisiveness_basis"], routing["forced_single"]) == (
        None, "pinned", False)
    assert routing["reasoning"] == "The request named a; a named model is always used."


def test_pinned_variant_without_route_is_substituted_by_its_base() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="a:fp8")]
    decision = decide_with(make_snapshot(models, [make_route(model_id="a")]), make_request(model="a:fp8"))
    routing = decision.routing
    assert (routing["model"], routing["variant_substituted"], routing["requested_variant"]) == (
        "a", True, "a:fp8")
    assert routing["variant_label"] is None


def test_pinned_base_never_becomes_one_of_its_variants() -> None:
    models = [make_model(id="a"), make_model(id="a:fp8")]
    with pytest.raises(RoutingError) as caught:
        decide_with(make_snapshot(models, [make_route(model_id="a:fp8")]), make_request(model="a"))
    assert (caught.value.status, caught.value.code) == (503, "no_servable_route")
    assert caught.value.filter_trail[-1]["step"] == "servable"


def test_pinned_model_with_no_fitting_route_carries_the_trail() -> None:
    with pytest.raises(RoutingError) as caught:
        decide_with(make_catalog({"a": 0.9}, context_window=300), make_request(model="a", prompt_tokens=200))
    assert caught.value.code == "no_servable_route"
    assert caught.value.filter_trail[-1] == {"step": "context_fit", "in": 1, "out": 0}


def test_pinned_model_outside_the_pool_is_refused_when_policy_requires_it() -> None:
    policy = make_policy(pool=("b",), require_pinned_in_pool=True)
    with pytest.raises(RoutingError) as caught:
        decide_with(make_catalog({"a": 0.9, "b": 0.9}), make_request(model="a"), policy=policy)
    assert (caught.value.status, caught.value.code, caught.value.param) == (403, "model_not_in_pool", "model")


def test_pinned_model_outside_the_request_pool_is_refused_when_policy_requires_it() -> None:
    request = make_request(model="a", routing={"model_pool": ("b",)})
    with pytest.raises(RoutingError) as caught:
        decide_with(make_catalog({"a": 0.9, "b": 0.9}), request, policy=make_policy(require_pinned_in_pool=True))
    assert caught.value.code == "model_not_in_pool"


def test_pinned_variant_is_in_the_pool_through_its_base_id() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="a:fp8")]
    policy = make_policy(pool=("a",), require_pinned_in_pool=True)
    decision = decide_with(make_snapshot(models, [make_route(model_id="a:fp8")]), make_request(model="a:fp8"),
                           policy=policy)
    assert decision.routing["model"] == "a:fp8"


def test_pinned_model_outside_the_pool_is_served_when_policy_does_not_require_it() -> None:
    decision = decide_with(make_catalog({"a": 0.9, "b": 0.9}), make_request(model="a"),
                           policy=make_policy(pool=("b",)))
    assert decision.routing["model"] == "a"


def test_pinned_model_keeps_only_routes_under_the_cost_ceiling() -> None:
    routes = [make_route(model_id="a", provider="groq", price_output=50.0), make_route(model_id="a", provider="together")]
    request = make_request(model="a", max_tokens=100, routing={"max_cost_micros": 1_000})
    decision = decide_with(make_snapshot([make_model(id="a")], routes), request)
    assert chain_ids(decision) == ["together/a"]


def test_pinned_route_credential_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_TEST_KEY", "sk-env")
    snapshot = make_snapshot([make_model(id="a")], [make_route(model_id="a", api_key_env="GROQ_TEST_KEY")])
    decision = decide_with(snapshot, make_request(model="a"))
    assert (decision.chain[0].api_key, decision.chain[0].own_key) == ("sk-env", False)


# --- policy ------------------------------------------------------------------------------------------------


def test_policy_field_is_absent_under_the_untouched_default() -> None:
    decision = decide_with(make_catalog({"a": 0.9}))
    assert "policy" not in decision.routing


def test_policy_field_names_a_key_policy_and_its_rules() -> None:
    policy = make_policy(id=3, name="Cheap", source="key", objective="cost", pool=("a",))
    decision = decide_with(make_catalog({"a": 0.9, "b": 0.9}), policy=policy)
    assert decision.routing["policy"] == {"name": "Cheap", "source": "key",
                                          "rules": ["pool: 1 of 2 models", "objective: cost"], "ignored": []}


def test_policy_request_objective_sets_the_optimize_mode() -> None:
    decision = decide_with(make_catalog({"a": 0.9}), make_request(routing={"optimize": "cost"}))
    assert decision.routing["optimize_mode"] == "cost"
    assert decision.routing["policy"]["rules"] == ["objective: cost"]


def test_policy_timeouts_are_the_lower_of_policy_and_request() -> None:
    request = make_request(routing={"first_token_timeout_ms": 5_000, "deadline_ms": 90_000})
    decision = decide_with(make_catalog({"a": 0.9}), request)
    assert (decision.first_token_timeout_ms, decision.total_deadline_ms) == (5_000, 60_000)
    assert decision.routing["policy"]["ignored"] == ["routing.deadline_ms: longer than the policy's"]


def test_policy_longer_first_token_timeout_is_ignored_and_reported() -> None:
    decision = decide_with(make_catalog({"a": 0.9}), make_request(routing={"first_token_timeout_ms": 99_000}))
    assert decision.first_token_timeout_ms == 15_000
    assert decision.routing["policy"]["ignored"] == ["routing.first_token_timeout_ms: longer than the policy's"]


# --- session -----------------------------------------------------------------------------------------------


def test_session_stays_on_the_model_that_began_the_conversation() -> None:
    request = make_request(has_history=True, session_model="b", routing={"optimize": "quality"})
    decision = decide_with(make_catalog({"a": 0.9, "b": 0.8}), request)
    assert decision.routing["model"] == "b"
    assert decision.routing["session"] == {"sticky": True, "model": "b",
                                           "reason": "stayed on the model that began the conversation"}


def test_session_moves_and_names_the_step_that_removed_the_model() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a"), make_route(model_id="b", context_window=1_000)]
    request = make_request(prompt_tokens=900, has_history=True, session_model="b")
    session = decide_with(make_snapshot(models, routes), request).routing["session"]
    assert (session["sticky"], session["model"], session["step"]) == (False, "b", "context_fit")
    assert session["reason"] == "moved: the model that began the conversation does not fit the request's length"


def test_session_is_absent_for_a_fresh_conversation() -> None:
    assert "session" not in decide_with(make_catalog({"a": 0.9})).routing


def test_session_without_a_known_model_is_routed_afresh() -> None:
    session = decide_with(make_catalog({"a": 0.9}), make_request(has_history=True)).routing["session"]
    assert (session["sticky"], session["model"]) == (False, None)


# --- routing object ----------------------------------------------------------------------------------------


def test_cache_preference_puts_caching_providers_first() -> None:
    routes = [make_route(model_id="a", provider="groq", price_input=0.5),
              make_route(model_id="a", provider="together", prompt_caching="automatic")]
    decision = decide_with(make_snapshot([make_model(id="a", benchmarks={"chat": 0.9})], routes),
                           make_request(routing={"prefer_cache": True}))
    assert chain_ids(decision) == ["together/a", "groq/a"]
    assert decision.routing["cache_fit"] == {"preference": "prefer", "provider_caching": "automatic",
                                             "satisfied": True}


def test_cache_preference_is_unsatisfied_without_a_caching_provider() -> None:
    decision = decide_with(make_catalog({"a": 0.9}), make_request(routing={"prefer_cache": True}))
    assert decision.routing["cache_fit"]["satisfied"] is False


def test_alternatives_show_at_most_five_contenders_pick_first() -> None:
    decision = decide_with(make_catalog({f"m{i}": 0.6 + i / 100 for i in range(7)}),
                           make_request(routing={"optimize": "quality"}))
    alternatives = decision.routing["alternatives"]
    assert [alt["rank"] for alt in alternatives] == [1, 2, 3, 4, 5]
    assert alternatives[0]["model"] == decision.routing["model"] == "m6"


def test_routing_object_marks_a_cached_classification() -> None:
    decision = decide_with(make_catalog({"a": 0.9}), classification=make_classification(cached=True))
    assert decision.routing["classification_cached"] is True


def test_routing_object_leaves_gateway_fields_out() -> None:
    routing = decide_with(make_catalog({"a": 0.9, "b": 0.8})).routing
    assert {"object", "routing_time_ms", "truncated", "classification_cached"}.isdisjoint(routing)
    assert {"task", "complexity", "estimated", "model", "base_id", "variant_label", "slow_tier"} <= set(routing)


def test_decide_does_not_depend_on_catalog_order() -> None:
    forward = make_catalog({"a": 0.8, "b": 0.8, "c": 0.7})
    backward = make_catalog({"c": 0.7, "b": 0.8, "a": 0.8})
    request = make_request(routing={"optimize": "quality"})
    assert decide_with(forward, request).routing == decide_with(backward, request).routing


def test_decide_is_importable_from_the_engine_package() -> None:
    assert decide.__module__ == "routing.engine.core"


def test_pinned_model_without_verified_structured_output_is_still_used() -> None:
    models = [make_model(id="a", verified_structured_output=False, benchmarks={"chat": 0.5})]
    decision = decide_with(make_snapshot(models, [make_route(model_id="a")]),
                           make_request(model="a", needs_structured_output=True))
    assert [link.model.id for link in decision.chain] == ["a"]


def test_auto_serves_only_verified_structured_output() -> None:
    models = [make_model(id="a", verified_structured_output=False, benchmarks={"chat": 0.9}),
              make_model(id="b", verified_structured_output=True, benchmarks={"chat": 0.6})]
    routes = [make_route(model_id="a"), make_route(model_id="b")]
    decision = decide_with(make_snapshot(models, routes), make_request(needs_structured_output=True))
    assert {link.model.id for link in decision.chain} == {"b"}


def test_pinned_model_lacking_tools_is_a_400_naming_the_model() -> None:
    models = [make_model(id="a", supports_tools=False)]
    with pytest.raises(RoutingError) as caught:
        decide_with(make_snapshot(models, [make_route(model_id="a")]), make_request(model="a", needs_tools=True))
    assert (caught.value.status, caught.value.code, caught.value.param) == (400, "model_lacks_capability", "model")
    assert caught.value.filter_trail[-1]["step"] == "capability_fit"


def test_thinking_on_a_route_that_declares_no_switch_runs_the_models_default() -> None:
    # Nothing is sent where no switch is declared, so the hybrid model thinks as it does by default
    # (served OpenAI-style: on), and the routing object says so rather than claim what was asked.
    for fields in ({"extended_thinking": False}, {"complexity": "easy"}):
        routing, send = thinking_of("switchable", switches=("none",), **fields)  # type: ignore[arg-type]
        assert (routing["thinking"], routing["thinking_reason"], send) == ("on", "model_ignores_off", None)
    routing, send = thinking_of("switchable", switches=("none",), extended_thinking=True)
    assert (routing["thinking"], "thinking_reason" in routing, send) == ("on", False, None)


def test_thinking_is_absent_when_only_some_routes_can_switch_it_off() -> None:
    decision = thinking_decision("switchable", dialects=("openai", "openai"),
                                 switches=("reasoning_effort", "none"), extended_thinking=False)
    assert ("thinking" in decision.routing, decision.thinking) == (False, False)
    # The route that can switch is sent the switch; the one that cannot is sent none.
    assert {link.route.provider: link.thinking for link in decision.chain} == {"p0": False, "p1": None}
    routing, send = thinking_of("switchable", dialects=("openai", "openai"), switches=("reasoning_effort", "none"),
                                extended_thinking=True)
    assert (routing["thinking"], send) == ("on", True)  # on is what both do


def test_thinking_on_anthropic_needs_no_declared_switch() -> None:
    routing, send = thinking_of("switchable", dialects=("anthropic",), switches=("none",), task="maths")
    assert (routing["thinking"], routing["thinking_reason"], send) == ("on", "task_needs_thinking", True)
