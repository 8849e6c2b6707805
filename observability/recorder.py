"""Writes logs and decisions off the response path, and never loses one.

`record()` only appends to an in-memory queue. A background task per event loop writes batches
in the writer's own thread, with its own database connection, never in the one thread that
`database_sync_to_async` shares with the key and snapshot lookups (a write waiting on a locked table
would hold them all). When the database refuses, the batch is retried with backoff;
while it keeps failing, batches are appended to a spool file (JSON lines) that is replayed once the
database answers again, so a restart of the database or of the process loses nothing already spooled.
At shutdown (`shutdown()`, called by the server's SIGTERM/SIGINT handling in `inferbase.asgi`) the
queue is written, and what the database does not take in time is spooled; `start()` at server start
replays the spool at once.

Spool files are claimed under an exclusive `flock`: the process that appends to a spool file, or
replays a claimed one, holds it, and the kernel releases it when that process dies, so a replay file
left by a crash (whatever its pid, even one reused by a live process) is taken up by the next replay.
A line that does not parse (a write torn by a crash) is set aside in a `.rejected` file beside it.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import queue
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson
from django.db import close_old_connections

logger = logging.getLogger("inferbase.observability")

Store = Callable[[list[dict[str, Any]]], None]

# How often an idle writer retries a spool the database refused (it also retries after every write).
SPOOL_RETRY_SECONDS = 5.0


_job = threading.local()


def writer_job_loop() -> asyncio.AbstractEventLoop | None:
    """Return the event loop that handed the writer thread the job it is running (None outside a job), so that
    a store can hand work back to that loop without waiting for it (call_soon_threadsafe)."""
    return getattr(_job, "loop", None)


class WriterThread:
    """Runs the store in one daemon thread of its own, which holds its own database connection.

    A daemon, so that a write stuck on a locked table does not keep the process from exiting: shutdown
    spools whatever the database has not confirmed."""

    def __init__(self, name: str = "inferbase-log-writer") -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...], asyncio.AbstractEventLoop,
                                            asyncio.Future[Any]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._starting = threading.Lock()

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Call fn(*args) in the writer's thread and return its result (or raise its exception)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        if self._thread is None:
            with self._starting:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._work, name=self._name, daemon=True)
                    self._thread.start()
        self._jobs.put((fn, args, loop, future))
        return await future

    def _work(self) -> None:
        while True:
            fn, args, loop, future = self._jobs.get()
            result: Any = None
            error: BaseException | None = None
            # As database_sync_to_async does: drop a connection that broke or outlived CONN_MAX_AGE.
            try:
                close_old_connections()
                _job.loop = loop
                result = fn(*args)
            except BaseException as exc:
                error = exc
            finally:
                try:
                    close_old_connections()
                except Exception:
                    logger.debug("log writer: closing a broken connection failed", exc_info=True)
            try:
                loop.call_soon_threadsafe(_settle, future, result, error)
            except RuntimeError:
                pass  # the loop is closed: no one waits for this result any more


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():
        return  # the waiter was cancelled (shutdown spooled the batch)
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


@dataclass
class _LoopWriter:
    """The writer of one event loop: its queue, its task, the batch it is writing."""

    queue: asyncio.Queue[dict[str, Any]]
    hurry: asyncio.Event  # set at shutdown: write at once, no lingering
    task: asyncio.Task[None] | None = None
    writing: list[dict[str, Any]] = field(default_factory=list)


class Recorder:
    """The process's log writer: a queue and a writing task per event loop, one writer thread for all."""

    def __init__(self, store: Store, spool_dir: Path, *, batch_size: int = 200, max_retries: int = 3,
                 linger: float = 0.05) -> None:
        self._store = store
        self._linger = linger
        self._spool_dir = spool_dir
        self._batch_size = batch_size
        self._max_retries = max_retries
        self._writers: dict[int, _LoopWriter] = {}
        self._spool_waiting = True  # records may wait in the spool (this process's or a dead one's)
        self._writer = WriterThread()
        self.pending = 0

    def _loop_writer(self) -> _LoopWriter:
        """Return this loop's writer, starting its task when it is not running."""
        loop = asyncio.get_running_loop()
        writer = self._writers.get(id(loop))
        if writer is None:
            writer = self._writers[id(loop)] = _LoopWriter(asyncio.Queue(), asyncio.Event())
        if writer.task is None or writer.task.done():
            writer.task = loop.create_task(self._run(writer), name="inferbase-recorder")
        return writer

    def start(self) -> None:
        """Start this loop's writer now, not at the first record, so that it replays the spool at once."""
        self._loop_writer()

    def record(self, record: dict[str, Any]) -> None:
        """Queue one record for writing; returns at once."""
        self.pending += 1
        self._loop_writer().queue.put_nowait(record)

    async def drain(self, seconds: float = 10.0) -> None:
        """Wait until everything queued on this loop is written or spooled (tests)."""
        writer = self._writers.get(id(asyncio.get_running_loop()))
        if writer is not None:
            async with asyncio.timeout(seconds):
                await writer.queue.join()

    async def shutdown(self, seconds: float) -> None:
        """Write everything queued on this loop, spool what the database has not taken within `seconds`, and
        stop the writer. Never raises: the process is exiting."""
        writer = self._writers.get(id(asyncio.get_running_loop()))
        if writer is None:
            return
        writer.hurry.set()
        try:
            async with asyncio.timeout(seconds):
                await writer.queue.join()
        except TimeoutError:
            pass
        if writer.task is not None:
            writer.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer.task
        # What the database did not confirm: the batch in the writer's hands (a stalled write may still land;
        # the replay writes nothing twice) and whatever is still queued.
        left = list(writer.writing)
        while not writer.queue.empty():
            left.append(writer.queue.get_nowait())
            writer.queue.task_done()
        if not left:
            return
        try:
            await asyncio.to_thread(self._spool, left)
        except Exception:
            logger.exception("shutdown: could not spool %d records: %s", len(left), _ids(left))
        else:
            logger.warning("shutdown: the database took no more records within %s s; %d spooled for replay",
                           seconds, len(left))

    async def _run(self, writer: _LoopWriter) -> None:
        queue = writer.queue
        await self._replay_spool()
        while True:
            if self._spool_waiting:
                try:
                    first = await asyncio.wait_for(queue.get(), SPOOL_RETRY_SECONDS)
                except TimeoutError:
                    await self._replay_spool()
                    continue
            else:
                first = await queue.get()
            if queue.qsize() < self._batch_size // 4 and not writer.hurry.is_set():
                # Linger a moment so that a busy server writes tens of rows per commit, not one.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(writer.hurry.wait(), self._linger)
            batch = [first]
            while len(batch) < self._batch_size and not queue.empty():
                batch.append(queue.get_nowait())
            writer.writing = batch
            try:
                await self._write(batch)
            except Exception:  # the spool itself failed (disk full, permissions): say what was lost, go on
                logger.exception("log writer lost %d records: %s", len(batch), _ids(batch))
            else:
                writer.writing = []
            finally:
                for _ in batch:
                    queue.task_done()
                self.pending -= len(batch)

    async def _write(self, batch: list[dict[str, Any]]) -> None:
        delay = 0.05
        for attempt in range(self._max_retries + 1):
            try:
                await self._writer.run(self._store, batch)
            except Exception:  # the database is down, slow or refusing: retry, then spool
                if attempt == self._max_retries:
                    logger.warning("database refused %d log records; spooled for replay", len(batch), exc_info=True)
                    await asyncio.to_thread(self._spool, batch)
                    self._spool_waiting = True
                    return
                await asyncio.sleep(delay)
                delay *= 4
            else:
                if self._spool_waiting:
                    await self._replay_spool()
                return

    def _spool_path(self) -> Path:
        return self._spool_dir / f"records-{os.getpid()}.jsonl"

    def _spool(self, batch: list[dict[str, Any]]) -> None:
        self._spool_dir.mkdir(parents=True, exist_ok=True)
        data = b"".join(orjson.dumps(record, default=str) + b"\n" for record in batch)
        path = self._spool_path()
        while True:
            with path.open("a+b") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX)
                if not _same_file(fh, path):
                    continue  # a replay claimed the file between our open and our lock: start a new one
                size = fh.seek(0, os.SEEK_END)
                if size:
                    fh.seek(size - 1)
                    if fh.read(1) != b"\n":
                        data = b"\n" + data  # a torn last line (a crash mid-write) stays a line of its own
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
                return

    async def _replay_spool(self) -> None:
        """Write what the spool holds; never raises (the writer must keep running)."""
        try:
            self._spool_waiting = not await self._replay_files()
        except Exception:
            logger.exception("log writer: spool replay failed; retrying later")
            self._spool_waiting = True

    async def _replay_files(self) -> bool:
        """Replay every spool file no live process holds; return True when none is left."""
        done = True
        for path in await asyncio.to_thread(_spool_files, self._spool_dir):
            claimed = await asyncio.to_thread(_claim, path)
            if claimed is None:
                done = False  # held by a live process (appending, or replaying it now): look again later
                continue
            path, fh = claimed
            try:
                records = await asyncio.to_thread(_read_claimed, path, fh)
                for start in range(0, len(records), self._batch_size):
                    await self._writer.run(self._store, records[start : start + self._batch_size])
            except Exception:
                logger.warning("database refused the spool replay of %s; retrying later", path.name, exc_info=True)
                return False
            else:
                path.unlink()
            finally:
                fh.close()
        return done


def _ids(records: list[dict[str, Any]]) -> str:
    return ", ".join(str(record.get("log", {}).get("request_id")) for record in records)


def _same_file(fh: IO[bytes], path: Path) -> bool:
    """Return True when `path` still names the file `fh` has open (no replay renamed it away)."""
    try:
        here, there = os.fstat(fh.fileno()), os.stat(path)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _spool_files(spool_dir: Path) -> list[Path]:
    """Spool files (records-PID.jsonl), claimed ones (replaying-PID-TOKEN.jsonl, or records-PID.replaying-PID
    from earlier versions), oldest first."""
    if not spool_dir.is_dir():
        return []
    paths = [*spool_dir.glob("records-*.jsonl"), *spool_dir.glob("replaying-*.jsonl"),
             *spool_dir.glob("records-*.replaying-*")]
    return sorted((p for p in paths if p.suffix != ".rejected"), key=lambda p: (_mtime(p), p.name))


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return 0.0


def _claim(path: Path) -> tuple[Path, IO[bytes]] | None:
    """Lock a spool file no process holds, renaming a live spool file so that its writer starts a new one;
    return the claimed path and the open (locked) file, or None when it is held or gone."""
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        return None
    if not _same_file(fh, path):
        fh.close()
        return None
    if path.name.startswith("records-") and path.suffix == ".jsonl":
        claimed = path.with_name(f"replaying-{os.getpid()}-{secrets.token_hex(4)}.jsonl")
        path.rename(claimed)  # the lock travels with the file
        path = claimed
    return path, fh


def _read_claimed(path: Path, fh: IO[bytes]) -> list[dict[str, Any]]:
    """Parse a claimed file; lines that do not parse as a record go to `<name>.rejected`, with an error logged."""
    records: list[dict[str, Any]] = []
    rejected: list[bytes] = []
    for line in fh.read().splitlines():
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            rejected.append(line)
            continue
        if isinstance(record, dict) and isinstance(record.get("log"), dict):
            records.append(record)
        else:
            rejected.append(line)
    if rejected:
        aside = path.with_name(path.name + ".rejected")
        # Written whole each time: a replay retried after a refusal sets the same lines aside again.
        with aside.open("wb") as out:
            out.write(b"\n".join(rejected) + b"\n")
            out.flush()
            os.fsync(out.fileno())
        logger.error("spool %s: %d unreadable line(s) set aside in %s", path.name, len(rejected), aside)
    return records
