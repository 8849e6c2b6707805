"""Usage's pending set (inferbase/gateway/pending.py): requests answered and not yet committed are added to the
rollups, once, for their organization only, until the writer commits them or their entry expires; in the
process (embedded default) and in Redis (REDIS_URL; skipped, saying so, when it is unset)."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime

import pytest

from billing.services import usage_rollup_add
from inferbase.gateway import pending as pending_module
from inferbase.gateway.pending import PendingUsage, usage_reports
from inferbase.gateway.persist import RecordStore
from inferbase.gateway.shared import SharedRedis
from inferbase.gateway.state import AppState
from observability.services import records_store

TODAY = datetime.now(UTC).date()


def _log(request_id: str, org: int, cost: int, *, model: str = "m", project: int = 1) -> dict:
    return {"request_id": request_id, "organization_id": org, "project_id": project, "api_key_id": 1,
            "created_at": time.time(), "model_requested": "auto", "model_served": model, "prompt_tokens": 3,
            "completion_tokens": 2, "reasoning_tokens": None, "cost_micros": cost}


@pytest.fixture(params=["embedded", "redis"])
def pending(request: pytest.FixtureRequest) -> Iterator[PendingUsage]:
    if request.param == "embedded":
        yield PendingUsage(SharedRedis("", ""), ttl_seconds=60)
        return
    url = os.environ.get("REDIS_URL")
    if not url:
        pytest.skip("REDIS_URL is not set: the pending set's Redis form is not tested here")
    store = PendingUsage(SharedRedis(url, f"test-{uuid.uuid4().hex[:8]}"), ttl_seconds=60)
    yield store
    client = store._redis.sync_client()
    for key in client.scan_iter(f"{store.key(0, TODAY).split(':usage-pending:')[0]}:usage-pending:*"):
        client.delete(key)
    client.close()


def _put(store: PendingUsage, *logs: dict) -> None:
    async def go() -> None:
        for log in logs:
            store.put(log)
        await store.written()
        await store._redis.aclose()

    asyncio.run(go())


def _totals(store: PendingUsage, org: int, group_by: str = "day") -> dict:
    return usage_reports(store, organization_id=org, start=TODAY, end=TODAY, group_bys=[group_by])[group_by].as_dict()


@pytest.mark.django_db
def test_pending_requests_are_added_once_and_only_to_their_organization(pending: PendingUsage) -> None:
    usage_rollup_add([_log("stored-before", 1, 100)])
    _put(pending, _log("p1", 1, 7), _log("p2", 1, 5, model="other"), _log("theirs", 2, 1_000))
    report = _totals(pending, 1)
    assert report["totals"] == {"requests": 3, "prompt_tokens": 9, "completion_tokens": 6, "reasoning_tokens": 0,
                                "cost_micros": 112}
    by_model = _totals(pending, 1, "model")["data"]
    assert {row["model"]: row["cost_micros"] for row in by_model} == {"m": 107, "other": 5}
    assert _totals(pending, 2)["totals"]["cost_micros"] == 1_000
    assert _totals(pending, 3)["totals"]["requests"] == 0


@pytest.mark.django_db
def test_a_committed_request_still_pending_counts_once(pending: PendingUsage) -> None:
    log = _log(f"req-{uuid.uuid4().hex[:16]}", 1, 7)
    _put(pending, log)
    assert _totals(pending, 1)["totals"]["cost_micros"] == 7
    # The writer commits (row and rollup in one transaction) and has not deleted the entry yet.
    record = {"log": {**log, "status_code": 200, "final_disposition": "served"}, "decision": None}
    usage_rollup_add(records_store([record]))
    assert pending.pending(1, TODAY, TODAY)  # still there
    assert _totals(pending, 1)["totals"] == {"requests": 1, "prompt_tokens": 3, "completion_tokens": 2,
                                             "reasoning_tokens": 0, "cost_micros": 7}
    # The writer's store deletes the entries of what it committed, after the commit (a replay stores nothing).
    RecordStore(AppState.from_settings().decisions, pending)([record])
    assert pending.pending(1, TODAY, TODAY) == []
    assert _totals(pending, 1)["totals"]["cost_micros"] == 7


def test_entries_older_than_the_ttl_stop_counting(pending: PendingUsage, monkeypatch: pytest.MonkeyPatch) -> None:
    _put(pending, _log("old", 1, 7))
    assert [log["request_id"] for log in pending.pending(1, TODAY, TODAY)] == ["old"]
    later = time.time() + pending.ttl + 1
    monkeypatch.setattr(pending_module.time, "time", lambda: later)
    assert pending.pending(1, date.fromtimestamp(later), date.fromtimestamp(later)) == []
    assert pending.pending(1, TODAY, date.fromtimestamp(later)) == []


def test_a_request_without_an_organization_is_not_usage(pending: PendingUsage) -> None:
    _put(pending, {**_log("anonymous", 1, 7), "organization_id": None})
    assert pending.pending(1, TODAY, TODAY) == []
