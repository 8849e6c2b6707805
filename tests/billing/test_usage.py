"""Usage rollups: the log writer adds each stored log once; the report reads them by day, model, project, key."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from billing.models import UsageRollup
from billing.selectors import usage_pending_merge, usage_report
from billing.services import usage_day, usage_rollup_add
from inferbase.gateway.state import AppState
from observability.models import RequestLog

pytestmark = pytest.mark.django_db(transaction=True)

DAY1 = datetime(2026, 11, 29, 23, 59, 59, tzinfo=UTC).timestamp()
DAY2 = datetime(2026, 11, 30, 0, 0, 1, tzinfo=UTC).timestamp()


def _log(request_id: str, *, org: int | None = 1, project: int = 10, key: int = 100, model: str = "m-a",
         at: float = DAY1, prompt: int = 10, completion: int = 5, reasoning: int | None = None, cost: int = 7) -> dict:
    return {"request_id": request_id, "organization_id": org, "project_id": project, "api_key_id": key,
            "created_at": at, "model_requested": "auto", "model_served": model, "status_code": 200,
            "final_disposition": "served", "prompt_tokens": prompt, "completion_tokens": completion,
            "reasoning_tokens": reasoning, "cost_micros": cost}


def _report(group_by: str = "day", org: int = 1) -> dict:
    return usage_report(organization_id=org, start=date(2026, 11, 1), end=date(2026, 11, 30), group_by=group_by).as_dict()


def test_rollups_sum_a_batch_per_day_and_group() -> None:
    usage_rollup_add([_log("a"), _log("b", cost=3, reasoning=2), _log("c", at=DAY2, model="m-b", cost=11),
                      _log("x", org=None, cost=999)])
    usage_rollup_add([_log("d", cost=1)])
    assert _report() == {
        "object": "usage", "from": "2026-11-01", "to": "2026-11-30",
        "totals": {"requests": 4, "prompt_tokens": 40, "completion_tokens": 20, "reasoning_tokens": 2, "cost_micros": 22},
        "data": [
            {"day": "2026-11-29", "requests": 3, "prompt_tokens": 30, "completion_tokens": 15, "reasoning_tokens": 2,
             "cost_micros": 11},
            {"day": "2026-11-30", "requests": 1, "prompt_tokens": 10, "completion_tokens": 5, "reasoning_tokens": 0,
             "cost_micros": 11},
        ],
    }
    assert UsageRollup.objects.count() == 2


def test_report_groups_by_model_project_and_key_and_counts_one_organization() -> None:
    usage_rollup_add([_log("a", model="m-b", project=11, key=101), _log("b"), _log("c", project=0, key=0),
                      _log("z", org=2, cost=1000)])
    assert [(r["model"], r["requests"]) for r in _report("model")["data"]] == [("m-a", 2), ("m-b", 1)]
    assert [(r["project_id"], r["requests"]) for r in _report("project")["data"]] == [(None, 1), (10, 1), (11, 1)]
    assert [(r["api_key_id"], r["cost_micros"]) for r in _report("key")["data"]] == [(None, 7), (100, 7), (101, 7)]
    assert _report()["totals"]["cost_micros"] == 21
    assert _report(org=2)["totals"]["cost_micros"] == 1000


def test_report_keeps_to_its_days() -> None:
    usage_rollup_add([_log("a", at=datetime(2026, 10, 31, 23, tzinfo=UTC).timestamp()), _log("b"),
                      _log("c", at=datetime(2026, 12, 1, tzinfo=UTC).timestamp())])
    assert _report()["totals"]["requests"] == 1


def test_the_log_writer_counts_a_replayed_batch_once() -> None:
    first = [{"log": _log("r1"), "decision": None}, {"log": _log("r2", cost=5), "decision": None}]
    records_and_key_use_store = AppState.from_settings().record_store
    records_and_key_use_store(first)
    records_and_key_use_store(first)  # replayed whole (the spool after a crash)
    records_and_key_use_store([first[1], {"log": _log("r3", cost=100), "decision": None}])  # partly new
    assert RequestLog.objects.count() == 3
    assert _report()["totals"] == {"requests": 3, "prompt_tokens": 30, "completion_tokens": 15, "reasoning_tokens": 0,
                                   "cost_micros": 112}


def test_usage_day_reads_every_form_of_created_at() -> None:
    assert usage_day(DAY1) == usage_day(datetime.fromtimestamp(DAY1, tz=UTC)) == date(2026, 11, 29)
    assert usage_day("2026-11-30T00:30:00+01:00") == date(2026, 11, 29)


def test_pending_records_are_merged_into_the_report() -> None:
    usage_rollup_add([_log("a")])
    report = usage_report(organization_id=1, start=date(2026, 11, 1), end=date(2026, 11, 30), group_by="model")
    merged = usage_pending_merge(report, [_log("p1", cost=3), _log("p2", model="m-0", cost=4),
                                          _log("p3", at=datetime(2026, 12, 2, tzinfo=UTC).timestamp(), cost=50),
                                          _log("p4", org=2, cost=60)])
    assert [(r["model"], r["requests"], r["cost_micros"]) for r in merged.data] == [("m-0", 1, 4), ("m-a", 2, 10)]
    assert merged.totals["cost_micros"] == 14
