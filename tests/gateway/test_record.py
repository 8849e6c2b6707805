"""The decision the log writer stores: one shape whether the request was routed or refused by routing."""

from __future__ import annotations

from inferbase.gateway.errors import NotRouted
from inferbase.gateway.exchange import Exchange, outcome_ended
from inferbase.gateway.record import decision_entry
from routing.decision import Classification
from tests.gateway.upstreams import KEY, exchange, link


def test_a_routed_and_an_unrouted_decision_have_the_same_fields_in_the_same_order() -> None:
    routed = exchange(link("a"), link("b"))
    routed.outcome = outcome_ended(link=routed.routed.decision.chain[0])  # type: ignore[union-attr]
    refusal = NotRouted(503, "Nothing fits.", code="no_eligible_model", param=None,
                        filter_trail=({"step": "pool_loaded", "in": 3, "out": 0},),
                        filter_trail_text=("0 of 3 models in the pool.",), routing_mode="balanced",
                        classification=Classification(task="coding", complexity="hard"))
    unrouted = Exchange(request_id="req-unrouted", key=KEY, outcome=outcome_ended(error=refusal))
    served, refused = decision_entry(routed), decision_entry(unrouted)
    assert served is not None and refused is not None
    assert list(served) == list(refused)
    assert served["chain_attempted"] == ["a/model-a", "b/model-b"] and served["final_disposition"] == "served"
    assert refused == {
        "request_id": "req-unrouted", "organization_id": 1, "created_at": unrouted.created,
        "routing_mode": "balanced", "classifier_task_family": "coding", "complexity_band": "hard",
        "eligibility_pool_size": 0, "final_disposition": "not_routed", "decisiveness": None, "forced_single": False,
        "chain_attempted": [], "route_displays": {}, "filter_trail": [{"step": "pool_loaded", "in": 3, "out": 0}],
        "filter_trail_text": ["0 of 3 models in the pool."], "routing": {}, "attempts": []}


def test_nothing_is_recorded_as_a_decision_when_the_request_never_reached_routing() -> None:
    assert decision_entry(Exchange(request_id="req-early", key=KEY)) is None
