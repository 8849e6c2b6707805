"""The application's state, built once at start-up (`AppState.from_settings`, in inferbase.asgi) and handed
to every request in its ASGI scope: the routing snapshot and API-key lookups below, the shared caches, the
circuit breaker, the decision copies, the log writer and the upstream clients. Nothing on the request path
lives in a module global; tests build a state of their own.

The snapshot and key lookups:

Both live in memory and are refreshed through the shared cache's version key (Redis in
production), so every process sees admin edits within INFERBASE_SNAPSHOT_CHECK_SECONDS.
What a process holds is served at once (stale while revalidating): a refresh runs in the
background, one at a time, and only a value not held yet is waited for, with one
`database_sync_to_async` call; never a sync ORM call on the event loop. The log writer has its
own thread, so these lookups never wait behind a write.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from channels.db import database_sync_to_async
from channels.middleware import BaseMiddleware
from django.conf import settings
from django.core.cache import caches

from billing.limits import Limiter
from billing.selectors import limits_snapshot_load
from inferbase.accounts.selectors import KeyInfo, default_policy_maps, key_info_get, provider_secrets
from observability.recorder import Recorder
from providers.http import UpstreamClients
from routing.snapshot import VERSION_KEY, Snapshot, snapshot_build, snapshot_version_bump

from .decisions import SharedDecisions
from .guard import guardrails_by_policy
from .limits import NO_BILLING, BillingSnapshot, limiter_from_settings
from .pending import PendingUsage
from .persist import RecordStore
from .shared import Background, RouteHealth, SharedLRU, SharedRedis

logger = logging.getLogger("inferbase.gateway")


def _report_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.warning("background refresh %s failed; serving what this process holds", task.get_name(),
                       exc_info=task.exception())


def _snapshot_load(version: str) -> Snapshot:
    project_policy, organization_policy = default_policy_maps()
    return snapshot_build(
        version,
        project_policy=project_policy,
        organization_policy=organization_policy,
        provider_keys=provider_secrets(),
    )


def _snapshots_load(version: str) -> tuple[Snapshot, BillingSnapshot]:
    """Build the routing snapshot and, in the same database call, what billing reads per request."""
    snapshot = _snapshot_load(version)
    policies = [*snapshot.policies.values()]
    return snapshot, BillingSnapshot(limits=limits_snapshot_load(), guardrails=guardrails_by_policy(policies))


class SnapshotHolder:
    """Holds this process's snapshot; re-checks the shared version in the background, at most once per
    check interval, while requests go on with the snapshot held. The check goes through one cache client
    kept for the process, so its connection is reused."""

    def __init__(self) -> None:
        self._snapshot: Snapshot | None = None
        self.billing: BillingSnapshot = NO_BILLING  # loaded with the snapshot, replaced with it
        self._checked_at = 0.0
        self._refreshing: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task[Snapshot]] = (
            weakref.WeakKeyDictionary())
        self._cache: Any = None

    def invalidate(self) -> None:
        self._snapshot = None
        self._checked_at = 0.0

    @property
    def version(self) -> str | None:
        """The version of the snapshot this process holds (None before the first load)."""
        return self._snapshot.version if self._snapshot is not None else None

    async def _version(self) -> str | None:
        if self._cache is None:
            # Not the task-local `cache` proxy: that would make (and connect) a new client per task.
            self._cache = caches.create_connection("default")
        return await self._cache.aget(VERSION_KEY)

    async def get(self) -> Snapshot:
        """Return the snapshot held, starting a background re-check when it is due; only the first load waits."""
        snap = self._snapshot
        if snap is None:
            return await asyncio.shield(self._refresh_task())
        if time.monotonic() - self._checked_at >= settings.INFERBASE_SNAPSHOT_CHECK_SECONDS:
            self._refresh_task()
        return snap

    def _refresh_task(self) -> asyncio.Task[Snapshot]:
        loop = asyncio.get_running_loop()
        task = self._refreshing.get(loop)
        if task is None or task.done():
            task = loop.create_task(self._refresh(), name="inferbase-snapshot-refresh")
            task.add_done_callback(_report_failure)
            self._refreshing[loop] = task
        return task

    async def _refresh(self) -> Snapshot:
        try:
            version = await self._version()
            current = self._snapshot
            if current is not None and version == current.version:
                return current
            if version is None:
                version = await database_sync_to_async(snapshot_version_bump)()
            built, billing = await database_sync_to_async(_snapshots_load)(version)
            self._snapshot, self.billing = built, billing
            return built
        finally:
            self._checked_at = time.monotonic()  # a failed check, too, waits its interval before the next


class KeyCache:
    """API key lookups by hash: an in-process LRU, re-read from the database in the background once an entry is
    older than the TTL or than the snapshot version (an admin edit)."""

    def __init__(self, snapshots: SnapshotHolder, size: int = 10_000) -> None:
        self._snapshots = snapshots
        self._entries: OrderedDict[str, tuple[float, KeyInfo | None, str | None]] = OrderedDict()
        self._refreshing: dict[str, asyncio.Task[KeyInfo | None]] = {}
        self._size = size

    def clear(self) -> None:
        self._entries.clear()

    async def get(self, key_hash: str) -> KeyInfo | None:
        """Return the key's info (None when unknown); a revocation is seen within the TTL or a version bump."""
        entry = self._entries.get(key_hash)
        if entry is None:
            return await asyncio.shield(self._refresh_task(key_hash))
        self._entries.move_to_end(key_hash)
        if (time.monotonic() - entry[0] >= settings.INFERBASE_KEY_CACHE_SECONDS
                or entry[2] != self._snapshots.version):
            self._refresh_task(key_hash)
        return entry[1]

    def _refresh_task(self, key_hash: str) -> asyncio.Task[KeyInfo | None]:
        loop = asyncio.get_running_loop()
        task = self._refreshing.get(key_hash)
        if task is None or task.done() or task.get_loop() is not loop:
            task = loop.create_task(self._refresh(key_hash), name="inferbase-key-refresh")
            task.add_done_callback(_report_failure)
            task.add_done_callback(lambda done: self._refreshing.pop(key_hash, None)
                                   if self._refreshing.get(key_hash) is done else None)
            self._refreshing[key_hash] = task
        return task

    async def _refresh(self, key_hash: str) -> KeyInfo | None:
        version = self._snapshots.version
        info = await database_sync_to_async(key_info_get)(key_hash=key_hash)
        self._entries[key_hash] = (time.monotonic(), info, version)
        self._entries.move_to_end(key_hash)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)
        return info



SCOPE_KEY = "inferbase"  # where the ASGI scope carries the state (StateMiddleware puts it there)


@dataclass(frozen=True, eq=False)
class AppState:
    """Everything a request reads or writes beyond its own values, held for the process's lifetime."""

    snapshot_holder: SnapshotHolder
    key_cache: KeyCache
    classifications: SharedLRU
    sessions: SharedLRU
    route_health: RouteHealth
    decisions: SharedDecisions
    usage_pending: PendingUsage  # requests answered, not yet in the usage rollups (GET /usage adds them)
    recorder: Recorder
    record_store: RecordStore  # what the recorder stores with (in its writer thread)
    upstream: UpstreamClients
    limiter: Limiter  # budgets and rate limits: Redis counters when REDIS_URL is set
    background: Background = field(default_factory=Background)  # work a request starts and does not wait for
    # GET /models/{id}/health: one probe of stale providers at a time, per event loop.
    probe_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = field(
        default_factory=weakref.WeakKeyDictionary)

    def probe_lock(self) -> asyncio.Lock:
        """Return this event loop's lock for the health view's probes."""
        loop = asyncio.get_running_loop()
        lock = self.probe_locks.get(loop)
        if lock is None:
            lock = self.probe_locks[loop] = asyncio.Lock()
        return lock

    @classmethod
    def from_settings(cls) -> AppState:
        """Build the state the settings describe; nothing connects until first used (inside the serving loop)."""
        background = Background()
        redis = SharedRedis(settings.REDIS_URL, settings.INFERBASE_CACHE_PREFIX, background)
        snapshots = SnapshotHolder()
        decisions = SharedDecisions(redis, Path(settings.INFERBASE_CACHE_DIR) / "decisions",
                                    settings.INFERBASE_DECISION_COPY_SECONDS)
        usage_pending = PendingUsage(redis, settings.INFERBASE_USAGE_PENDING_SECONDS)
        store = RecordStore(decisions, usage_pending, route_samples=settings.INFERBASE_ROUTE_SAMPLES,
                            live_tail=settings.INFERBASE_LIVE_TAIL)
        recorder = Recorder(store, Path(settings.INFERBASE_SPOOL_DIR), linger=settings.INFERBASE_RECORD_LINGER_SECONDS)
        store.queued = lambda: recorder.pending
        return cls(
            snapshot_holder=snapshots,
            key_cache=KeyCache(snapshots),
            classifications=SharedLRU("classification", size=50_000, ttl_seconds=24 * 3600, redis=redis),
            sessions=SharedLRU("session", size=100_000, ttl_seconds=6 * 3600, redis=redis),
            route_health=RouteHealth(threshold=settings.INFERBASE_ROUTE_FAILURE_THRESHOLD,
                                     rest_seconds=settings.INFERBASE_ROUTE_REST_SECONDS, redis=redis),
            decisions=decisions,
            usage_pending=usage_pending,
            recorder=recorder,
            record_store=store,
            upstream=UpstreamClients(settings.INFERBASE_UPSTREAM_TRANSPORT),
            limiter=limiter_from_settings(),
            background=background,
        )


def state_of(request: Any) -> AppState:
    """Return the state a Django or DRF request was served with (its ASGI scope's); a request that did not come
    through inferbase.asgi (Django's test client) gets a state of its own, built for it."""
    request = getattr(request, "_request", request)  # DRF's Request wraps Django's
    scope = getattr(request, "scope", None)
    state = scope.get(SCOPE_KEY) if scope is not None else None
    return state if state is not None else AppState.from_settings()


class StateMiddleware(BaseMiddleware):
    """Hands the application's state to every connection in its scope, as Channels' auth middleware hands
    the user."""

    def __init__(self, inner: Any, state: AppState) -> None:
        super().__init__(inner)
        self.state = state

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        return await self.inner({**scope, SCOPE_KEY: self.state}, receive, send)
