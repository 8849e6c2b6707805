"""Requests answered and not yet in the usage rollups: what GET /usage and the portal's Usage page add to them.

The log writer commits a batch a moment after the answers (it lingers to batch), so the rollups lag the
client by that moment. Before the last byte of a response goes out, the request's usage figures (the fields of
its log record that Usage counts) go into a pending set: with REDIS_URL a hash per organization and UTC day
(`<prefix>:usage-pending:<organization>:<day>`, request_id → {at, log}), written by a task of the event loop that
the response never waits for (puts made in one turn of the loop go in one pipeline; at most MAX_QUEUED wait,
beyond that a put is dropped and the request shows in Usage when the writer commits it); without REDIS_URL a
dict in this process (the embedded default is one process: its API and portal read that dict). The log writer
deletes the ids it committed, after the commit. Readers keep only entries younger than the TTL
(INFERBASE_USAGE_PENDING_SECONDS), so an entry whose row never comes (a crashed writer, a record spooled through
a long database outage) stops counting then; the hashes expire too. The reader drops the ids RequestLog already
holds (committed, not yet deleted), so nothing counts twice (`billing.selectors.usage_with_pending`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import weakref
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import orjson
from django.db import connection, transaction

from billing.selectors import UsageReport, usage_pending_merge, usage_report
from billing.services import usage_day
from observability.selectors import request_logs_stored

from .shared import SharedRedis

logger = logging.getLogger("inferbase.gateway")

# The fields of a log record that Usage counts (billing.services.usage_deltas), plus its id.
USAGE_FIELDS = ("request_id", "organization_id", "project_id", "api_key_id", "created_at", "model_requested",
                "model_served", "prompt_tokens", "completion_tokens", "reasoning_tokens", "cost_micros")
MAX_QUEUED = 5_000  # puts waiting for their Redis write, per event loop; past it a put is dropped
REDIS_BACKOFF_S = 5.0  # after a failed write, puts are dropped for this long (no queue builds up on a dead Redis)
PRUNE_EVERY_S = 60.0  # the embedded dict drops its expired entries this often


class PendingUsage:
    """The pending set: `put` on the event loop (never waits), `forget` from the log writer's thread after its
    commit, `pending` from the views (sync)."""

    def __init__(self, redis: SharedRedis, ttl_seconds: float) -> None:
        self._redis = redis
        self.ttl = ttl_seconds
        self._local: dict[tuple[int, str], dict[str, tuple[float, dict[str, Any]]]] = {}
        self._lock = threading.Lock()
        self._pruned_at = time.monotonic()
        self._queued: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[tuple[str, str, bytes]]] = (
            weakref.WeakKeyDictionary())
        self._writers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task[None]] = (
            weakref.WeakKeyDictionary())
        self._down_until = 0.0
        self.dropped = 0  # puts dropped (queue full, Redis failing): those requests show when committed

    def key(self, organization_id: int, day: date | str) -> str:
        day_text = day if isinstance(day, str) else day.isoformat()
        return f"{self._redis.prefix}:usage-pending:{organization_id}:{day_text}"

    def put(self, log: dict[str, Any]) -> None:
        """Add a request's usage fields (a log record's, see USAGE_FIELDS); returns at once."""
        organization_id = log.get("organization_id")
        if organization_id is None:
            return  # no key, no organization: not usage
        day = usage_day(log["created_at"]).isoformat()
        now = time.time()
        if not self._redis.url:
            with self._lock:
                self._local.setdefault((organization_id, day), {})[log["request_id"]] = (now, log)
                if time.monotonic() - self._pruned_at >= PRUNE_EVERY_S:
                    self._prune(now)
            return
        if time.monotonic() < self._down_until:
            self.dropped += 1
            return
        loop = asyncio.get_running_loop()
        queued = self._queued.get(loop)
        if queued is None:
            queued = self._queued[loop] = []
        if len(queued) >= MAX_QUEUED:
            self.dropped += 1
            return
        queued.append((self.key(organization_id, day), log["request_id"], orjson.dumps({"at": now, "log": log})))
        writer = self._writers.get(loop)
        if writer is None or writer.done():
            self._writers[loop] = loop.create_task(self._write_queued(loop), name="inferbase-usage-pending")

    async def _write_queued(self, loop: asyncio.AbstractEventLoop) -> None:
        """Write the loop's queued puts, one pipeline at a time (those made meanwhile go in the next)."""
        await asyncio.sleep(0)  # the puts of this turn of the loop go in the first pipeline
        while items := self._queued.pop(loop, None):
            try:
                async with self._redis.client().pipeline(transaction=False) as pipe:
                    for key, request_id, data in items:
                        pipe.hset(key, request_id, data)
                    for key in {key for key, _, _ in items}:
                        pipe.expire(key, int(self.ttl) + 60)
                    await pipe.execute()
            except Exception:
                self._down_until = time.monotonic() + REDIS_BACKOFF_S
                self.dropped += len(items)
                logger.warning("usage pending set: %d entries not written (Usage shows them once committed)",
                               len(items), exc_info=True)

    async def written(self) -> None:
        """Wait until this loop's queued puts are written (tests; the request path never waits)."""
        writer = self._writers.get(asyncio.get_running_loop())
        if writer is not None:
            await writer

    def forget(self, logs: Iterable[dict[str, Any]]) -> None:
        """Delete the entries of committed log records (the log writer calls this after its commit); never raises."""
        by_key: dict[tuple[int, str], list[str]] = {}
        for log in logs:
            if log.get("organization_id") is not None:
                day = usage_day(log["created_at"]).isoformat()
                by_key.setdefault((log["organization_id"], day), []).append(log["request_id"])
        if not by_key:
            return
        try:
            if not self._redis.url:
                with self._lock:
                    for place, request_ids in by_key.items():
                        entries = self._local.get(place)
                        for request_id in request_ids if entries is not None else ():
                            entries.pop(request_id, None)  # type: ignore[union-attr]
                        if entries is not None and not entries:
                            del self._local[place]
                return
            pipe = self._redis.sync_client().pipeline(transaction=False)
            for (organization_id, day), request_ids in by_key.items():
                pipe.hdel(self.key(organization_id, day), *request_ids)
            pipe.execute()
        except Exception:
            logger.warning("usage pending set: delete failed (entries expire; readers skip stored ones)",
                           exc_info=True)

    def pending(self, organization_id: int, start: date, end: date) -> list[dict[str, Any]]:
        """Return the organization's pending log records (usage fields) of days start..end that are younger than the
        TTL; [] when the set cannot be read (Usage is then the rollups alone)."""
        now = time.time()
        oldest = now - self.ttl
        days = [d for d in _days_between(datetime.fromtimestamp(oldest, tz=UTC).date(), datetime.now(UTC).date())
                if start <= d <= end]
        if not days:
            return []
        if not self._redis.url:
            with self._lock:
                return [log for day in days
                        for at, log in self._local.get((organization_id, day.isoformat()), {}).values() if at >= oldest]
        try:
            pipe = self._redis.sync_client().pipeline(transaction=False)
            for day in days:
                pipe.hgetall(self.key(organization_id, day))
            hashes = pipe.execute()
        except Exception:
            logger.warning("usage pending set: read failed (Usage shows the rollups alone)", exc_info=True)
            return []
        logs = []
        for entries in hashes:
            for raw in entries.values():
                entry = orjson.loads(raw)
                if entry["at"] >= oldest:
                    logs.append(entry["log"])
        return logs

    def _prune(self, now: float) -> None:
        self._pruned_at = time.monotonic()
        oldest = now - self.ttl
        for place in list(self._local):
            entries = {rid: entry for rid, entry in self._local[place].items() if entry[0] >= oldest}
            if entries:
                self._local[place] = entries
            else:
                del self._local[place]


def _days_between(first: date, last: date) -> list[date]:
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


def usage_reports(pending: PendingUsage, *, organization_id: int, start: date, end: date,
                  group_bys: Iterable[str]) -> dict[str, UsageReport]:
    """Return the organization's usage per group_by: the rollups plus the pending requests whose rows are not
    stored yet, each counted once (GET /usage and the portal's Usage page).

    The pending set is read first; the rollups and the stored ids then in one snapshot (one transaction, repeatable
    read on PostgreSQL), so a commit between the reads neither drops a request nor counts it twice."""
    logs = pending.pending(organization_id, start, end)
    outermost = not connection.in_atomic_block  # SET TRANSACTION must be a transaction's first statement
    with transaction.atomic():
        if connection.vendor == "postgresql" and outermost:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        reports = {group_by: usage_report(organization_id=organization_id, start=start, end=end, group_by=group_by)
                   for group_by in group_bys}
        stored = request_logs_stored(organization_id=organization_id, request_ids=[log["request_id"] for log in logs])
    fresh = [log for log in logs if log["request_id"] not in stored]
    return {group_by: usage_pending_merge(report, fresh) if fresh else report for group_by, report in reports.items()}

