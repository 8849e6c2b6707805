"""Caches and counters that work across processes: an in-process LRU in front of Redis.

Without REDIS_URL (the embedded default, one process) only the in-process part exists. With it,
a miss in this process asks Redis (asynchronously, never blocking the loop), and writes go to
Redis in the background, so every gateway process shares classifications, sessions and route health.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections import OrderedDict
from typing import Any

import orjson
from django.conf import settings

logger = logging.getLogger("inferbase.gateway")

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()
_background: set[asyncio.Task[Any]] = set()


def _redis() -> Any:
    """Return this loop's async Redis client, or None without REDIS_URL or outside an event loop."""
    url = getattr(settings, "REDIS_URL", "")
    if not url:
        return None
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None  # called from sync code (a command, a test): this process's part only
    client = _clients.get(loop)
    if client is None:
        import redis.asyncio as aioredis

        client = aioredis.Redis.from_url(url, socket_timeout=0.25, socket_connect_timeout=0.25)
        _clients[loop] = client
    return client


def _spawn(coro: Any) -> None:
    task = asyncio.ensure_future(coro)
    _background.add(task)
    task.add_done_callback(_background.discard)


class SharedLRU:
    """A bounded, TTL'd map of JSON values shared across processes through Redis when configured."""

    def __init__(self, name: str, *, size: int, ttl_seconds: int) -> None:
        self.name = name
        self._size = size
        self._ttl = ttl_seconds
        self._data: OrderedDict[str, tuple[float, Any]] = OrderedDict()

    def _prefix(self) -> str:
        return f"{getattr(settings, 'INFERBASE_CACHE_PREFIX', 'inferbase')}:{self.name}:"

    def get_local(self, key: str) -> Any:
        entry = self._data.get(key)
        if entry is None:
            return None
        if entry[0] < time.monotonic():
            del self._data[key]
            return None
        self._data.move_to_end(key)
        return entry[1]

    def _put_local(self, key: str, value: Any) -> None:
        self._data[key] = (time.monotonic() + self._ttl, value)
        self._data.move_to_end(key)
        while len(self._data) > self._size:
            self._data.popitem(last=False)

    async def get(self, key: str) -> Any:
        """Return the value from this process, else from Redis (a failure there is a miss)."""
        value = self.get_local(key)
        if value is not None:
            return value
        client = _redis()
        if client is None:
            return None
        try:
            raw = await client.get(self._prefix() + key)
        except Exception:  # Redis slow or down: the cache is an optimisation, never a failure
            logger.debug("shared cache %s: Redis read failed", self.name, exc_info=True)
            return None
        if raw is None:
            return None
        value = orjson.loads(raw)
        self._put_local(key, value)
        return value

    def put(self, key: str, value: Any) -> None:
        """Store locally now, and in Redis in the background."""
        self._put_local(key, value)
        client = _redis()
        if client is not None:
            _spawn(self._write(client, key, value))

    async def _write(self, client: Any, key: str, value: Any) -> None:
        try:
            await client.set(self._prefix() + key, orjson.dumps(value), ex=self._ttl)
        except Exception:
            logger.debug("shared cache %s: Redis write failed", self.name, exc_info=True)

    def clear_local(self) -> None:
        self._data.clear()


class RouteHealth:
    """A circuit breaker per route: after `threshold` consecutive failures a route rests for `rest_seconds`.

    Failures are counted in this process; an opened circuit is published through Redis so the other
    processes skip the route too (they learn of it when they next refresh, every second at most)."""

    def __init__(self, *, threshold: int | None = None, rest_seconds: float | None = None) -> None:
        self._threshold = threshold
        self._rest_seconds = rest_seconds
        self._failures: dict[str, int] = {}
        self._open_until: dict[str, float] = {}
        self._shared_checked = 0.0

    @property
    def threshold(self) -> int:
        return self._threshold or int(settings.INFERBASE_ROUTE_FAILURE_THRESHOLD)

    @property
    def rest_seconds(self) -> float:
        return self._rest_seconds if self._rest_seconds is not None else float(settings.INFERBASE_ROUTE_REST_SECONDS)

    def resting(self) -> dict[str, float]:
        """Return the routes resting now, each with the wall-clock time it rests until (wall-clock so
        that processes agree, and so that routing can say until when)."""
        if not self._open_until:
            return {}
        now = time.time()
        for route, until in list(self._open_until.items()):
            if until <= now:
                del self._open_until[route]
        return dict(self._open_until)

    def record(self, route_id: str, ok: bool) -> None:
        if ok:
            self._failures.pop(route_id, None)
            return
        count = self._failures.get(route_id, 0) + 1
        self._failures[route_id] = count
        if count >= self.threshold:
            until = time.time() + self.rest_seconds
            self._open_until[route_id] = until
            self._failures.pop(route_id, None)
            client = _redis()
            if client is not None:
                _spawn(self._publish(client, route_id, until))

    async def refresh(self) -> None:
        """Merge circuits opened by other processes (at most once a second; no-op without Redis)."""
        client = _redis()
        now = time.monotonic()
        if client is None or now - self._shared_checked < 1.0:
            return
        self._shared_checked = now
        try:
            entries = await client.hgetall(self._key())
        except Exception:
            return
        wall = time.time()
        for route, until in entries.items():
            until_f = float(until)
            if until_f > wall:
                self._open_until[route.decode()] = max(until_f, self._open_until.get(route.decode(), 0.0))

    def _key(self) -> str:
        return f"{getattr(settings, 'INFERBASE_CACHE_PREFIX', 'inferbase')}:route-health"

    async def _publish(self, client: Any, route_id: str, until: float) -> None:
        try:
            await client.hset(self._key(), route_id, str(until))
        except Exception:
            logger.debug("route health: Redis write failed", exc_info=True)


classifications = SharedLRU("classification", size=50_000, ttl_seconds=24 * 3600)
sessions = SharedLRU("session", size=100_000, ttl_seconds=6 * 3600)
route_health = RouteHealth()
