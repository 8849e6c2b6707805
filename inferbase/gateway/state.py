"""Per-process state read on the hot path: the routing snapshot and API-key lookups.

Both live in memory and are refreshed through the shared cache's version key (Redis in
production), so every process sees admin edits within INFERBASE_SNAPSHOT_CHECK_SECONDS.
On a miss, one `database_sync_to_async` call; never a sync ORM call on the event loop.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.core.cache import caches

from inferbase.accounts.selectors import KeyInfo, default_policy_maps, key_info_get, provider_secrets
from routing.snapshot import VERSION_KEY, Snapshot, snapshot_build, snapshot_version_bump


def _snapshot_load(version: str) -> Snapshot:
    project_policy, organization_policy = default_policy_maps()
    return snapshot_build(
        version,
        project_policy=project_policy,
        organization_policy=organization_policy,
        provider_keys=provider_secrets(),
    )


class SnapshotHolder:
    """Holds this process's snapshot; re-checks the shared version at most every check interval.

    One request checks while the others keep serving the snapshot they have (single flight), and the
    check goes through one cache client kept for the process, so its connection is reused."""

    def __init__(self) -> None:
        self._snapshot: Snapshot | None = None
        self._checked_at = 0.0
        self._checking = False
        self._locks: dict[int, asyncio.Lock] = {}
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
        """Return the current snapshot, rebuilding it when the shared version moved."""
        snap = self._snapshot
        now = time.monotonic()
        if snap is not None and (now - self._checked_at < settings.INFERBASE_SNAPSHOT_CHECK_SECONDS or self._checking):
            return snap
        self._checking = True
        try:
            version = await self._version()
            if snap is not None and version == snap.version:
                self._checked_at = time.monotonic()
                return snap
            lock = self._locks.setdefault(id(asyncio.get_running_loop()), asyncio.Lock())
            async with lock:
                current = self._snapshot
                if current is not None and current is not snap and current.version == version:
                    return current
                if version is None:
                    version = await database_sync_to_async(snapshot_version_bump)()
                built = await database_sync_to_async(_snapshot_load)(version)
                self._snapshot = built
                self._checked_at = time.monotonic()
                return built
        finally:
            self._checking = False


class KeyCache:
    """API key lookups by hash: an in-process LRU with a TTL, backed by the database."""

    def __init__(self, size: int = 10_000) -> None:
        self._entries: OrderedDict[str, tuple[float, KeyInfo | None, str | None]] = OrderedDict()
        self._size = size

    def clear(self) -> None:
        self._entries.clear()

    async def get(self, key_hash: str) -> KeyInfo | None:
        """Return the key's info (None when unknown); revocation is seen within the TTL or a version bump."""
        now = time.monotonic()
        version = snapshot_holder.version
        entry = self._entries.get(key_hash)
        if entry is not None and now - entry[0] < settings.INFERBASE_KEY_CACHE_SECONDS and entry[2] == version:
            self._entries.move_to_end(key_hash)
            return entry[1]
        info = await database_sync_to_async(key_info_get)(key_hash=key_hash)
        self._entries[key_hash] = (now, info, version)
        self._entries.move_to_end(key_hash)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)
        return info


snapshot_holder = SnapshotHolder()
key_cache = KeyCache()
