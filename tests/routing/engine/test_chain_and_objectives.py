"""routing.decide's chain, its objectives and the decisiveness it reports."""

from __future__ import annotations

from tests.routing.conftest import (
    chain_ids,
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
