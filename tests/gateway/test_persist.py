"""The log writer's store: logs, decisions and the keys' last use, with a bounded memory of keys marked."""

from __future__ import annotations

import time

import pytest

from inferbase.gateway import persist
from inferbase.gateway.state import AppState
from observability.models import RequestLog

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
