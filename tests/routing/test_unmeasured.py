"""Unmeasured models: exploration under explore_unmeasured, and a policy admitting them past the floor."""

from __future__ import annotations

from dataclasses import replace

import pytest

from routing.decision import RoutingError
from routing.snapshot import RouteLatencySnap
from tests.routing.conftest import (
    chain_ids,
    decide_with,
    make_model,
    make_policy,
    make_request,
    make_route,
    make_snapshot,
    step,
    step_text,
)

MEASURED = RouteLatencySnap(ttft_ms_p50=200, tokens_per_second=100.0, samples=50, source="traffic",
                            end_to_end_ms_p50=2000)
PRIOR = RouteLatencySnap(ttft_ms_p50=100, tokens_per_second=300.0)


def _snapshot(explore_share: float = 0.02):  # type: ignore[no-untyped-def]
    models = [make_model(id="known", benchmarks={"chat": 0.9}), make_model(id="new-a", benchmarks={"chat": 0.7}),
              make_model(id="new-b", benchmarks={"chat": 0.6})]
    routes = [make_route(model_id="known", latency=MEASURED), make_route(model_id="new-a", latency=PRIOR),
              make_route(model_id="new-b", latency=None)]
    return replace(make_snapshot(models, routes), explore_share=explore_share)


def test_exploration_sends_a_ticket_in_the_share_to_an_unmeasured_model_and_says_so() -> None:
    policy = make_policy(explore_unmeasured=True, objective="quality")
    first = decide_with(_snapshot(), make_request(ticket=0.001), policy=policy)
    second = decide_with(_snapshot(), make_request(ticket=0.015), policy=policy)
    assert (first.routing["model"], second.routing["model"]) == ("new-a", "new-b")
    assert first.routing["exploration"] is True
    assert first.routing["decisiveness_basis"] == "unmeasured" and first.routing["decisiveness"] is None
    assert first.routing["reasoning"].startswith(
        "Exploration: new-a has no latency samples yet, so this request, one of the 2% of eligible traffic the "
        "policy sends to unmeasured models, went to it; the ranked pick was known")
    assert chain_ids(first)[1:] == ["groq/known", "groq/new-b"]  # the ranked order follows as fallbacks


def test_a_ticket_outside_the_share_is_ranked_as_usual() -> None:
    decision = decide_with(_snapshot(), make_request(ticket=0.02), policy=make_policy(explore_unmeasured=True,
                                                                                      objective="quality"))
    assert decision.routing["model"] == "known" and "exploration" not in decision.routing


def test_exploration_is_off_by_default() -> None:
    decision = decide_with(_snapshot(), make_request(ticket=0.0), policy=make_policy(objective="quality"))
    assert decision.routing["model"] == "known" and "exploration" not in decision.routing


def test_no_exploration_mid_tool_loop() -> None:
    decision = decide_with(_snapshot(), make_request(ticket=0.0, tool_loop=True),
                           policy=make_policy(explore_unmeasured=True, objective="quality"))
    assert decision.routing["model"] == "known"


def _own_endpoint():  # type: ignore[no-untyped-def]
    models = [make_model(id="catalog-model", benchmarks={"chat": 0.9}), make_model(id="own-llama")]
    routes = [make_route(model_id="catalog-model"), make_route(model_id="own-llama", provider="ollama", latency=None)]
    return make_snapshot(models, routes)


def test_a_policy_can_admit_unmeasured_models_past_its_quality_floor() -> None:
    policy = make_policy(pool=("own-llama",), admit_unmeasured=True, quality_floor="strict")
    decision = decide_with(_own_endpoint(), policy=policy)
    assert decision.routing["model"] == "own-llama" and decision.routing["measured"] is False
    assert step(decision, "preset_eligibility")["admitted_unmeasured"] == ["own-llama"]
    assert step_text(decision, "preset_eligibility") == (
        "1 of 1 model meets the strict quality floor for this task, counting own-llama, without benchmark "
        "scores, which the policy admits with no quality floor.")


def test_without_admission_an_unmeasured_model_fails_a_standard_floor() -> None:
    with pytest.raises(RoutingError) as caught:
        decide_with(_own_endpoint(), policy=make_policy(pool=("own-llama",)))
    assert caught.value.code == "no_eligible_model"


def test_a_pick_ranked_on_an_unsourced_score_is_not_called_measured() -> None:
    sourced = make_snapshot([make_model(id="a", benchmarks={"chat": 0.9})], [make_route(model_id="a")])
    unsourced = make_snapshot([make_model(id="a", benchmarks={"chat": 0.9}, unverified=frozenset({"chat"}))],
                              [make_route(model_id="a")])
    assert decide_with(sourced).routing["measured"] is True
    assert decide_with(unsourced).routing["measured"] is False
