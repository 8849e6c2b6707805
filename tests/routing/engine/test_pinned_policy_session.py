"""routing.decide with a pinned model, policy narrowing, sessions, and the routing object."""

from __future__ import annotations

import pytest

from routing.decision import RoutingError
from routing.engine import decide
from tests.routing.conftest import (
    chain_ids,
    decide_with,
    make_catalog,
    make_classification,
    make_model,
    make_policy,
    make_request,
    make_route,
    make_snapshot,
)

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
