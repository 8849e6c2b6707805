"""Decisions readable by every gateway process from the moment their response ends.

The log writer commits in batches (INFERBASE_RECORD_LINGER_SECONDS), so a decision's row appears a
moment after the client has its answer. So, before the last byte of a response is sent, the decision,
shaped as GET /routing-decisions/{id} shows it, is copied to the shared cache: with REDIS_URL one SET,
awaited on the event loop; without, one file per group of copies under INFERBASE_CACHE_DIR/decisions, written
in a thread and named `<request id>.json` for each copy it holds (renamed into place when it holds one,
hard-linked when more; other processes on the host share that directory, as they share the file cache). The GET reads the row,
else the copy; the log writer deletes the copy once the row is committed, and a copy whose row never
comes (a record still spooled, or lost with a crash) expires after INFERBASE_DECISION_COPY_SECONDS.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import re
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from observability.selectors import decision_get

from .shared import SharedRedis

logger = logging.getLogger("inferbase.gateway")

REQUEST_ID_RE = re.compile(r"req-[0-9a-f]{16}")
# After a failed Redis write, the copies of the next seconds are written without waiting for Redis, so
# that a Redis outage does not add its timeout to every response.
REDIS_BACKOFF_S = 5.0
# How often the log writer looks for expired copy files (files only: Redis expires its keys itself).
SWEEP_EVERY_S = 600.0


@dataclass
class _Batch:
    """Copies that go to the cache together: one Redis pipeline, or one thread hop for their files."""

    items: list[tuple[str, bytes]] = field(default_factory=list)
    written: asyncio.Future[None] | None = None


class SharedDecisions:
    """Copies of decisions in the shared cache: written on the event loop, read and deleted by sync code.

    Copies made while a write is in flight go together in the next one (as a database group-commits):
    under load one round trip carries many, at a fraction of the CPU of one write each."""

    def __init__(self, redis: SharedRedis, directory: Path, ttl_seconds: float) -> None:
        self._redis = redis
        self._directory = directory  # where copies go without Redis
        self._ttl = ttl_seconds
        self._redis_down_until = 0.0
        self._open: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Batch] = weakref.WeakKeyDictionary()
        self._writers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task[None]] = (
            weakref.WeakKeyDictionary())
        self._swept_at = time.monotonic()
        self._temporaries = itertools.count()  # names of batch files being written (with the pid)

    async def put(self, request_id: str, organization_id: int | None, decision: dict[str, Any]) -> None:
        """Copy a decision for every process's GET; returns once it is readable (a failure is logged, and the
        GET then waits for the row)."""
        loop = asyncio.get_running_loop()
        batch = self._open.get(loop)
        if batch is None:
            batch = self._open[loop] = _Batch(written=loop.create_future())
            writer = self._writers.get(loop)
            if writer is None or writer.done():
                self._writers[loop] = loop.create_task(self._write_batches(loop), name="inferbase-decision-copies")
        batch.items.append((request_id, orjson.dumps({"organization_id": organization_id, "decision": decision})))
        if self._redis.url and time.monotonic() < self._redis_down_until:
            return  # Redis failed a moment ago: the copy is written in the background, not waited for
        assert batch.written is not None
        await asyncio.shield(batch.written)

    async def _write_batches(self, loop: asyncio.AbstractEventLoop) -> None:
        await asyncio.sleep(0)  # the copies made in this turn of the loop go in the first batch
        while (batch := self._open.pop(loop, None)) is not None:
            try:
                await self._write(batch.items)
            except Exception:
                if self._redis.url:
                    self._redis_down_until = time.monotonic() + REDIS_BACKOFF_S
                logger.warning("decision copies: %d not written (GET waits for their rows)", len(batch.items),
                               exc_info=True)
            finally:
                assert batch.written is not None
                if not batch.written.done():
                    batch.written.set_result(None)

    async def _write(self, items: list[tuple[str, bytes]]) -> None:
        client = self._redis.client()
        if client is None:
            await asyncio.to_thread(self._files_write, items)
            return
        ttl = int(self._ttl)
        if len(items) == 1:
            await client.set(self._key(items[0][0]), items[0][1], ex=ttl)
            return
        async with client.pipeline(transaction=False) as pipe:
            for request_id, data in items:
                pipe.set(self._key(request_id), data, ex=ttl)
            await pipe.execute()

    def get(self, request_id: str) -> tuple[int | None, dict[str, Any]] | None:
        """Return (organization id, decision) from the copy, or None when there is none (or it cannot be read)."""
        if not REQUEST_ID_RE.fullmatch(request_id):
            return None
        try:
            raw = self._redis.sync_client().get(self._key(request_id)) if self._redis.url else self._file_read(request_id)
        except Exception:
            logger.warning("decision copy %s: read failed", request_id, exc_info=True)
            return None
        if raw is None:
            return None
        copy = orjson.loads(raw)
        return copy["organization_id"], copy["decision"]

    def forget(self, request_ids: list[str]) -> None:
        """Delete the copies of decisions whose rows are written (the log writer calls this); never raises."""
        try:
            if self._redis.url:
                if request_ids:
                    self._redis.sync_client().delete(*(self._key(r) for r in request_ids))
                return
            directory = self._dir()
            for request_id in request_ids:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f"{directory}/{request_id}.json")
            if time.monotonic() - self._swept_at >= SWEEP_EVERY_S:
                self._swept_at = time.monotonic()
                self._file_sweep()
        except Exception:
            logger.warning("decision copies: delete failed (they expire anyway)", exc_info=True)

    def _key(self, request_id: str) -> str:
        return f"{self._redis.prefix}:decision:{request_id}"

    def _dir(self) -> Path:
        return self._directory

    def _file_path(self, request_id: str) -> Path:
        return self._dir() / f"{request_id}.json"

    def _files_write(self, items: list[tuple[str, bytes]]) -> None:
        """Write a batch of copies as one file, {request id: copy, ...}, then give it each copy's name (a rename
        for one copy, a hard link each for more): a reader sees the whole batch or no file, and one file written
        per batch instead of one per copy costs a fraction of the system calls (`python -m bench.decision_copy`)."""
        directory = self._directory
        data = b"{" + b",".join(orjson.dumps(request_id) + b":" + copy for request_id, copy in items) + b"}"
        temporary = f"{directory}/.batch.{os.getpid()}.{next(self._temporaries)}.tmp"
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        except FileNotFoundError:  # the first copy, or the directory was removed since
            directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        if len(items) == 1:
            os.replace(temporary, f"{directory}/{items[0][0]}.json")  # written again (a retried response): replaced
            return
        try:
            for request_id, _ in items:
                path = f"{directory}/{request_id}.json"
                try:
                    os.link(temporary, path)
                except FileExistsError:  # written again (a retried response): the newer copy wins
                    os.unlink(path)
                    os.link(temporary, path)
        finally:
            os.unlink(temporary)

    def _file_read(self, request_id: str) -> bytes | None:
        path = self._file_path(request_id)
        try:
            if time.time() - path.stat().st_mtime > self._ttl:
                return None
            batch = orjson.loads(path.read_bytes())
        except FileNotFoundError:
            return None
        copy = batch.get(request_id) if isinstance(batch, dict) else None
        if copy is None and isinstance(batch, dict) and "decision" in batch:
            copy = batch  # one copy per file (written by an earlier version)
        return None if copy is None else orjson.dumps(copy)

    def _file_sweep(self) -> None:
        if not self._dir().is_dir():
            return
        oldest = time.time() - self._ttl
        for entry in os.scandir(self._dir()):
            try:
                if entry.stat().st_mtime < oldest:
                    os.unlink(entry.path)
            except FileNotFoundError:
                pass


def decision_find(decisions: SharedDecisions, *, request_id: str, organization_ids: list[int]) -> dict[str, Any] | None:
    """Return the decision as the API shows it: its row, else its copy; None when missing or another
    organization's (the copy is checked as the row is)."""
    decision = decision_get(request_id=request_id, organization_ids=organization_ids)
    if decision is not None:
        return decision
    copy = decisions.get(request_id)
    if copy is None:
        # The row may have been committed, and its copy deleted, since the first read.
        return decision_get(request_id=request_id, organization_ids=organization_ids)
    organization_id, decision = copy
    return decision if organization_id in organization_ids else None

