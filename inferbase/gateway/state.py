"""Per-process state read on the hot path: the routing snapshot and API-key lookups.

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
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.core.cache import caches

from inferbase.accounts.selectors import KeyInfo, default_policy_maps, key_info_get, provider_secrets
from routing.snapshot import VERSION_KEY, Snapshot, snapshot_build, snapshot_version_bump

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


class SnapshotHolder:
    """Holds this process's snapshot; re-checks the shared version in the background, at most once per
    check interval, while requests go on with the snapshot held. The check goes through one cache client
    kept for the process, so its connection is reused."""

    def __init__(self) -> None:
        self._snapshot: Snapshot | None = None
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
            built = await database_sync_to_async(_snapshot_load)(version)
            self._snapshot = built
            return built
        finally:
            self._checked_at = time.monotonic()  # a failed check, too, waits its interval before the next


class KeyCache:
    """API key lookups by hash: an in-process LRU, re-read from the database in the background once an entry is
    older than the TTL or than the snapshot version (an admin edit)."""

    def __init__(self, size: int = 10_000) -> None:
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
                or entry[2] != snapshot_holder.version):
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
        version = snapshot_holder.version
        info = await database_sync_to_async(key_info_get)(key_hash=key_hash)
        self._entries[key_hash] = (time.monotonic(), info, version)
        self._entries.move_to_end(key_hash)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)
        return info


snapshot_holder = SnapshotHolder()
key_cache = KeyCache()
