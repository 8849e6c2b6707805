"""records_store: one batch insert, JSON columns round-trip, a replayed batch writes nothing twice."""

from __future__ import annotations

import time

import pytest

from observability.models import RequestLog, RoutingDecision
from observability.services import records_store

pytestmark = pytest.mark.django_db(transaction=True)


def _record(request_id: str) -> dict:
    now = time.time()
    return {
        "log": {"request_id": request_id, "created_at": now, "status_code": 200, "final_disposition": "served",
                "attempts": [{"route": "simulated/m", "outcome": "served", "ms": 3}], "dropped_params": ["store"],
                "cost_micros": 12, "reasoning_tokens": None, "organization_id": 1, "not_a_column": "ignored"},
        "decision": {"request_id": request_id, "created_at": now, "routing_mode": "balanced",
                     "final_disposition": "served", "filter_trail": [{"step": "pool_loaded", "in": 2, "out": 2}],
                     "filter_trail_text": ["2 models in the pool."], "routing": {"model": "m", "decisiveness": 0.5},
                     "route_displays": {"simulated/m": "M"}, "chain_attempted": ["simulated/m"], "organization_id": 1},
    }


def test_a_batch_is_written_with_its_json_intact() -> None:
    records_store([_record("req-a"), _record("req-b")])
    log = RequestLog.objects.get(request_id="req-a")
    assert log.attempts == [{"route": "simulated/m", "outcome": "served", "ms": 3}]
    assert log.dropped_params == ["store"] and log.reasoning_tokens is None and log.cost_micros == 12
    # Columns the record lacks take the model's defaults; the epoch timestamp becomes an aware datetime.
    assert log.prompt_tokens == 0 and log.stream is False and log.model_served == "" and log.ttft_ms is None
    assert abs(log.created_at.timestamp() - time.time()) < 60
    decision = RoutingDecision.objects.get(request_id="req-b")
    assert decision.routing == {"model": "m", "decisiveness": 0.5}
    assert decision.filter_trail_text == ["2 models in the pool."]
    assert decision.attempts == [] and decision.decisiveness is None and decision.forced_single is False


def test_a_replayed_batch_writes_nothing_twice() -> None:
    records_store([_record("req-a")])
    records_store([_record("req-a"), _record("req-c")])
    assert RequestLog.objects.count() == 2 and RoutingDecision.objects.count() == 2
