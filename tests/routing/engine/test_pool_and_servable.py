"""routing.decide's first filter steps: the pool loaded, and which models have a servable route."""

from __future__ import annotations

import pytest

from routing.decision import RoutingError
from tests.routing.conftest import (
    REST_UNTIL,
    chain_ids,
    decide_with,
    make_catalog,
    make_model,
    make_policy,
    make_request,
    make_route,
    make_snapshot,
    step,
    step_text,
)

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
