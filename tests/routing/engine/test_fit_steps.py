"""routing.decide's fit steps: context, capabilities, the cost ceiling, the preset's quality floor, and steps that empty the pool."""

from __future__ import annotations

import pytest

from routing.decision import RoutingError
from routing.engine.estimates import worst_case_cost_micros
from tests.routing.conftest import (
    decide_with,
    make_catalog,
    make_classification,
    make_model,
    make_policy,
    make_request,
    make_route,
    make_snapshot,
    step,
    step_text,
)

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
