"""The log writer's store: logs, decisions and the keys' last use, with a bounded memory of keys marked."""

from __future__ import annotations

import time

import pytest

from inferbase.gateway import persist
from inferbase.gateway.state import AppState
from observability.models import RequestLog
from routing.models import RouteSample

pytestmark = pytest.mark.django_db(transaction=True)


def _record(request_id: str, key_id: int) -> dict:
    return {"log": {"request_id": request_id, "created_at": time.time(), "status_code": 200,
                    "final_disposition": "served", "api_key_id": key_id}, "decision": None}


def test_keys_not_marked_within_the_minute_are_forgotten() -> None:
    store = persist.RecordStore(AppState.from_settings().decisions, prune_at=3)
    long_ago = time.monotonic() - 2 * persist.LAST_USED_RESOLUTION_S
    store.last_written.update({1001: long_ago, 1002: long_ago, 1003: long_ago})
    store([_record("req-a", 7), _record("req-b", 8)])
    assert set(store.last_written) == {7, 8}
    assert RequestLog.objects.count() == 2


def _attempted(request_id: str) -> dict:
    record = _record(request_id, 9)
    record["log"]["attempts"] = [{"route": "groq/m", "outcome": "served", "ms": 40}]
    return record


@pytest.mark.parametrize("on", [True, False])
def test_route_samples_and_the_live_tail_follow_their_settings(on: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    published: list[list[dict]] = []
    monkeypatch.setattr(persist, "live_tail_publish", published.append)
    store = persist.RecordStore(AppState.from_settings().decisions, route_samples=on, live_tail=on)
    store([_attempted(f"req-{on}")])
    assert RouteSample.objects.filter(route_id="groq/m").count() == (1 if on else 0)
    assert len(published) == (1 if on else 0)
    assert RequestLog.objects.count() == 1  # the log itself is stored either way
