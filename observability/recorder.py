"""Writes logs and decisions off the response path, and never loses one.

`record()` only appends to an in-memory queue. A background task per event loop writes batches
through `database_sync_to_async`. When the database refuses, the batch is retried with backoff;
while it keeps failing, batches are appended to a spool file (JSON lines) that is replayed once the
database answers again, so a restart of the database or of the process loses nothing already spooled.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from channels.db import database_sync_to_async

logger = logging.getLogger("inferbase.observability")

Store = Callable[[list[dict[str, Any]]], None]


class Recorder:
    def __init__(self, store: Store, spool_dir: Path, *, batch_size: int = 200, max_retries: int = 3,
                 linger: float = 0.05) -> None:
        self._store = store
        self._linger = linger
        self._spool_dir = spool_dir
        self._batch_size = batch_size
        self._max_retries = max_retries
        self._queues: dict[int, asyncio.Queue[dict[str, Any]]] = {}
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self.pending = 0

    def record(self, record: dict[str, Any]) -> None:
        """Queue one record for writing; returns at once."""
        loop = asyncio.get_running_loop()
        key = id(loop)
        queue = self._queues.get(key)
        task = self._tasks.get(key)
        if queue is None or task is None or task.done():
            queue = queue or asyncio.Queue()
            self._queues[key] = queue
            self._tasks[key] = loop.create_task(self._run(queue), name="inferbase-recorder")
        self.pending += 1
        queue.put_nowait(record)

    async def drain(self, seconds: float = 10.0) -> None:
        """Wait until everything queued on this loop is written or spooled (tests, shutdown)."""
        queue = self._queues.get(id(asyncio.get_running_loop()))
        if queue is not None:
            async with asyncio.timeout(seconds):
                await queue.join()

    async def _run(self, queue: asyncio.Queue[dict[str, Any]]) -> None:
        await self._replay_spool()
        while True:
            first = await queue.get()
            if queue.qsize() < self._batch_size // 4:
                # Linger a moment so that a busy server writes tens of rows per commit, not one.
                await asyncio.sleep(self._linger)
            batch = [first]
            while len(batch) < self._batch_size and not queue.empty():
                batch.append(queue.get_nowait())
            try:
                await self._write(batch)
            finally:
                for _ in batch:
                    queue.task_done()
                self.pending -= len(batch)

    async def _write(self, batch: list[dict[str, Any]]) -> None:
        delay = 0.05
        for attempt in range(self._max_retries + 1):
            try:
                await database_sync_to_async(self._store)(batch)
            except Exception:  # the database is down, slow or refusing: retry, then spool
                if attempt == self._max_retries:
                    logger.warning("database refused %d log records; spooled for replay", len(batch), exc_info=True)
                    await asyncio.to_thread(self._spool, batch)
                    return
                await asyncio.sleep(delay)
                delay *= 4
            else:
                await self._replay_spool()
                return

    def _spool_path(self) -> Path:
        return self._spool_dir / f"records-{os.getpid()}.jsonl"

    def _spool(self, batch: list[dict[str, Any]]) -> None:
        self._spool_dir.mkdir(parents=True, exist_ok=True)
        with self._spool_path().open("ab") as fh:
            for record in batch:
                fh.write(orjson.dumps(record, default=str) + b"\n")
            fh.flush()
            os.fsync(fh.fileno())

    async def _replay_spool(self) -> None:
        if not self._spool_dir.is_dir():
            return
        for path in sorted(self._spool_dir.glob("records-*.jsonl")):
            claimed = path.with_suffix(f".replaying-{os.getpid()}")
            try:
                path.rename(claimed)
            except OSError:
                continue  # another process took it
            records = [orjson.loads(line) for line in claimed.read_bytes().splitlines() if line.strip()]
            try:
                for start in range(0, len(records), self._batch_size):
                    await database_sync_to_async(self._store)(records[start : start + self._batch_size])
            except Exception:
                claimed.rename(path)
                return
            claimed.unlink()


_recorder: Recorder | None = None


def recorder() -> Recorder:
    """Return the process's recorder, storing through settings.INFERBASE_RECORD_STORE (a dotted path)."""
    global _recorder
    if _recorder is None:
        from django.conf import settings
        from django.utils.module_loading import import_string

        store = import_string(getattr(settings, "INFERBASE_RECORD_STORE", "observability.services.records_store"))
        _recorder = Recorder(store, Path(settings.INFERBASE_SPOOL_DIR),
                             linger=settings.INFERBASE_RECORD_LINGER_SECONDS)
    return _recorder
