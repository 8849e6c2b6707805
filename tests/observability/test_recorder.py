"""The log writer never loses a record: it retries, spools while the database refuses, replays later."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from channels.db import database_sync_to_async
from django.db import connections

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


def _spooled(path: Path, *lines: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def _line(i: int) -> bytes:
    return orjson.dumps(_record(i))


def _dead_pid() -> int:
    """The pid of a process that has exited."""
    return int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True).stdout)


def _hold_lock(path: Path) -> subprocess.Popen[str]:
    """Start a process that holds an exclusive flock on `path` until its stdin closes."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys; f = open(sys.argv[1], 'rb'); fcntl.flock(f, fcntl.LOCK_EX);"
         " print('held', flush=True); sys.stdin.read()", str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


async def test_a_torn_spool_line_is_set_aside_and_the_rest_is_written(tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    _spooled(tmp_path / "records-4242.jsonl", _line(1), b'{"log": {"request_id": "req-2"', _line(3))
    store = FlakyStore(failures=0)
    recorder = Recorder(store, tmp_path)
    recorder.record(_record(4))
    await recorder.drain(seconds=10)
    assert sorted(r["log"]["request_id"] for r in store.rows) == ["req-1", "req-3", "req-4"]
    [aside] = tmp_path.glob("*.rejected")
    assert aside.read_bytes() == b'{"log": {"request_id": "req-2"\n'
    assert "unreadable line" in caplog.text
    # The writer is still running: later records are written too.
    recorder.record(_record(5))
    await recorder.drain(seconds=10)
    assert "req-5" in {r["log"]["request_id"] for r in store.rows}
    assert not list(tmp_path.glob("*.jsonl"))


async def test_a_replay_file_left_by_a_dead_process_is_replayed(tmp_path: Path) -> None:
    pid = _dead_pid()
    # Both the name this version gives a claimed file and the one earlier versions gave it.
    _spooled(tmp_path / f"replaying-{pid}-0a1b2c3d.jsonl", _line(1))
    _spooled(tmp_path / f"records-{pid}.replaying-{pid}", _line(2))
    store = FlakyStore(failures=0)
    recorder = Recorder(store, tmp_path)
    recorder.record(_record(3))
    await recorder.drain(seconds=10)
    assert sorted(r["log"]["request_id"] for r in store.rows) == ["req-1", "req-2", "req-3"]
    assert not [p for p in tmp_path.iterdir() if p.is_file()]


async def test_a_spool_file_a_live_process_holds_is_left_to_it(tmp_path: Path) -> None:
    held = tmp_path / "replaying-1-00000000.jsonl"
    _spooled(held, _line(1))
    holder = _hold_lock(held)
    try:
        store = FlakyStore(failures=0)
        recorder = Recorder(store, tmp_path)
        recorder.record(_record(2))
        await recorder.drain(seconds=10)
        assert [r["log"]["request_id"] for r in store.rows] == ["req-2"]
        assert held.exists()
    finally:
        holder.communicate(input="", timeout=10)
    # Its holder is gone: the next replay takes it.
    recorder.record(_record(3))
    await recorder.drain(seconds=10)
    assert sorted(r["log"]["request_id"] for r in store.rows) == ["req-1", "req-2", "req-3"]
    assert not held.exists()


async def test_a_spool_append_after_a_torn_tail_starts_its_own_line(tmp_path: Path) -> None:
    recorder = Recorder(FlakyStore(failures=10), tmp_path, max_retries=0)
    path = tmp_path / f"records-{os.getpid()}.jsonl"
    path.write_bytes(_line(1) + b"\n" + b'{"log": {"req')
    recorder._spool([_record(2)])
    assert path.read_bytes().splitlines()[-1] == _line(2)


@pytest.mark.django_db(transaction=True)  # database_sync_to_async tidies the thread's connections
async def test_a_stalled_write_does_not_hold_the_thread_other_database_calls_use(tmp_path: Path) -> None:
    release = threading.Event()
    writing = threading.Event()

    def stalled(batch: list[dict[str, Any]]) -> None:
        writing.set()
        release.wait(30)

    recorder = Recorder(stalled, tmp_path, linger=0)
    recorder.record(_record(1))
    try:
        await asyncio.to_thread(writing.wait, 10)
        assert writing.is_set()
        # The key and snapshot lookups' door to the ORM still opens while the write waits.
        async with asyncio.timeout(10):
            assert await database_sync_to_async(threading.current_thread)() is not threading.current_thread()
    finally:
        release.set()
    await recorder.drain(seconds=10)
    await database_sync_to_async(connections.close_all)()  # so that the test database can be dropped


async def test_shutdown_spools_what_a_stalled_database_has_not_taken(tmp_path: Path) -> None:
    release = threading.Event()
    writing = threading.Event()

    def stalled(batch: list[dict[str, Any]]) -> None:
        writing.set()
        release.wait(30)
        raise ConnectionError("the lock was never released")

    recorder = Recorder(stalled, tmp_path, linger=0)
    recorder.record(_record(1))
    try:
        await asyncio.to_thread(writing.wait, 10)
        recorder.record(_record(2))  # queued behind the stalled write
        await recorder.shutdown(seconds=0.2)
    finally:
        release.set()
    # The next start replays them, before any record arrives.
    store = FlakyStore(failures=0)
    Recorder(store, tmp_path).start()
    deadline = time.monotonic() + 10
    while len(store.rows) < 2:
        assert time.monotonic() < deadline, "the spool was not replayed"
        await asyncio.sleep(0.01)
    assert sorted(r["log"]["request_id"] for r in store.rows) == ["req-1", "req-2"]
