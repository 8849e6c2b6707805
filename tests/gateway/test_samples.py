"""Route samples from log records, and the writer's store that keeps them beside the logs."""

from __future__ import annotations

import time

import pytest

from inferbase.gateway.samples import route_samples_from, sample_outcome
from inferbase.gateway.state import AppState
from routing.models import RouteSample


def _record(attempts: list[dict], **log: object) -> dict:
    return {"log": {"request_id": f"req-{time.monotonic_ns()}", "created_at": time.time(), "status_code": 200,
                    "final_disposition": "served", "stream": True, "completion_tokens": 40, "finish_reason": "stop",
                    "attempts": attempts, **log}, "decision": None}


def test_outcomes_say_what_they_tell_about_the_route() -> None:
    assert sample_outcome("served") == "served"
    assert sample_outcome("served_truncated") == "truncated"
    assert sample_outcome("no_content_before_limit") == "truncated"
    assert sample_outcome("first_token_timeout") == "timeout"
    assert sample_outcome("timeout") == "timeout"
    assert sample_outcome("http_503") == "error"
    assert sample_outcome("connection_refused") == "error"
    assert sample_outcome("rate_limited") == "error"
    assert sample_outcome("http_400") is None  # the request's fault, not the route's
    assert sample_outcome("skipped_deadline") is None  # never tried


def test_each_attempt_is_a_sample_and_the_served_one_carries_the_tokens() -> None:
    record = _record([
        {"route": "groq/a", "model": "a", "outcome": "http_503", "ms": 12},
        {"route": "together/a", "model": "a", "outcome": "served", "ms": 900, "first_token_ms": 120,
         "first_answer_token_ms": 400},
    ])
    rows = route_samples_from([record])
    assert rows == [
        {"route_id": "groq/a", "created_at": record["log"]["created_at"], "outcome": "error", "stream": True,
         "end_to_end_ms": 12, "first_token_ms": None, "first_answer_token_ms": None, "output_tokens": None},
        {"route_id": "together/a", "created_at": record["log"]["created_at"], "outcome": "served", "stream": True,
         "end_to_end_ms": 900, "first_token_ms": 120, "first_answer_token_ms": 400, "output_tokens": 40},
    ]


def test_an_answer_stopped_at_max_tokens_is_a_truncation() -> None:
    rows = route_samples_from([_record([{"route": "groq/a", "outcome": "served", "ms": 5}], finish_reason="length")])
    assert [row["outcome"] for row in rows] == ["truncated"]


def test_a_record_without_attempts_gives_no_sample() -> None:
    assert route_samples_from([_record([], final_disposition="not_routed")]) == []


@pytest.mark.django_db(transaction=True)
def test_the_writer_stores_the_samples_with_the_logs() -> None:
    AppState.from_settings().record_store([_record([{"route": "groq/a", "outcome": "timeout", "ms": 15000},
                                        {"route": "together/a", "outcome": "served", "ms": 800,
                                         "first_token_ms": 90, "first_answer_token_ms": 90}])])
    rows = list(RouteSample.objects.order_by("route_id").values_list("route_id", "outcome", "first_token_ms",
                                                                     "output_tokens"))
    assert rows == [("groq/a", "timeout", None, None), ("together/a", "served", 90, 40)]


@pytest.mark.django_db(transaction=True)
def test_a_replayed_batch_stores_its_samples_once() -> None:
    store = AppState.from_settings().record_store
    batch = [_record([{"route": "groq/a", "outcome": "timeout", "ms": 15000},
                      {"route": "together/a", "outcome": "served", "ms": 800, "first_token_ms": 90}]),
             _record([{"route": "together/a", "outcome": "served", "ms": 700, "first_token_ms": 80}])]
    store(batch)
    # Written again, as the spool replays a batch (or the writer retries one whose write failed past its commit),
    # with a record not stored before: only that one adds its sample.
    store([*batch, _record([{"route": "groq/a", "outcome": "served", "ms": 500, "first_token_ms": 60}])])
    rows = sorted(RouteSample.objects.values_list("route_id", "outcome"))
    assert rows == [("groq/a", "served"), ("groq/a", "timeout"), ("together/a", "served"), ("together/a", "served")]
