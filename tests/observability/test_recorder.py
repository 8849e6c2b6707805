"""The log writer never loses a record: it retries, spools while the database refuses, replays later."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from observability.recorder import Recorder


class FlakyStore:
    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.rows: list[dict[str, Any]] = []

    def __call__(self, batch: list[dict[str, Any]]) -> None:
        if self.failures > 0:
            self.failures -= 1
            raise ConnectionError("database is restarting")
        self.rows.extend(batch)


def _record(i: int) -> dict[str, Any]:
    return {"log": {"request_id": f"req-{i}"}, "decision": None}


async def test_recorder_writes_records_in_the_background(tmp_path: Path) -> None:
    store = FlakyStore(failures=0)
    recorder = Recorder(store, tmp_path)
    for i in range(5):
        recorder.record(_record(i))
    await recorder.drain(seconds=5)
    assert [r["log"]["request_id"] for r in store.rows] == [f"req-{i}" for i in range(5)]


async def test_recorder_retries_when_the_database_refuses_briefly(tmp_path: Path) -> None:
    store = FlakyStore(failures=2)
    recorder = Recorder(store, tmp_path, max_retries=3)
    recorder.record(_record(1))
    await recorder.drain(seconds=10)
    assert [r["log"]["request_id"] for r in store.rows] == ["req-1"]
    assert not list(tmp_path.glob("*.jsonl"))


async def test_recorder_spools_while_the_database_is_down_and_replays_later(tmp_path: Path) -> None:
    store = FlakyStore(failures=10)
    recorder = Recorder(store, tmp_path, max_retries=1)
    recorder.record(_record(1))
    await recorder.drain(seconds=10)
    assert store.rows == []
    assert list(tmp_path.glob("records-*.jsonl"))
    # The database is back: the next write replays the spool first-come, and nothing is lost.
    store.failures = 0
    recorder.record(_record(2))
    await recorder.drain(seconds=10)
    assert sorted(r["log"]["request_id"] for r in store.rows) == ["req-1", "req-2"]
    assert not list(tmp_path.glob("records-*.jsonl"))


async def test_a_new_process_replays_what_an_old_one_spooled(tmp_path: Path) -> None:
    down = Recorder(FlakyStore(failures=10), tmp_path, max_retries=0)
    down.record(_record(7))
    await down.drain(seconds=10)
    store = FlakyStore(failures=0)
    fresh = Recorder(store, tmp_path)
    fresh.record(_record(8))
    await fresh.drain(seconds=10)
    assert sorted(r["log"]["request_id"] for r in store.rows) == ["req-7", "req-8"]
