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

logger = logging.getLogger("inferbase.gateway")


class Background:
    """Work a request starts and does not wait for (cache writes, settling its limits): each task held until it
    ends, as the loop keeps only weak references to tasks."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, work: Any) -> asyncio.Task[Any]:
        """Run `work` (a coroutine or future) in the background; return its task."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def __len__(self) -> int:
        return len(self._tasks)


POOL_CONNECTIONS = 16  # per event loop; a GET or SET takes well under a millisecond
TIMEOUT_S = 0.25  # the longest a shared-cache call waits for Redis, then it is a miss


class SharedRedis:
    """This process's way to Redis for the shared caches: one async client per event loop (none without a
    URL), and the background writes it runs, held until they finish."""

    def __init__(self, url: str, prefix: str, background: Background | None = None) -> None:
        self.url = url
        self.prefix = prefix
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()
        self._sync: Any = None
        self.background = background if background is not None else Background()

    def client(self) -> Any:
        """Return this loop's async Redis client, or None without a URL or outside an event loop."""
        if not self.url:
            return None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None  # called from sync code (a command, a test): this process's part only
        client = self._clients.get(loop)
        if client is None:
            import redis.asyncio as aioredis

            # A blocking pool of a few connections: past POOL_CONNECTIONS concurrent calls, a call waits its turn
            # (at most the socket timeout, then it is a miss). redis-py's default pool opens a connection per
            # concurrent call and raises past 100, so a burst to one process lost its cached sessions.
            pool = aioredis.BlockingConnectionPool.from_url(
                self.url, max_connections=POOL_CONNECTIONS, timeout=TIMEOUT_S, socket_timeout=TIMEOUT_S,
                socket_connect_timeout=TIMEOUT_S)
            client = aioredis.Redis.from_pool(pool)
            self._clients[loop] = client
        return client

    def sync_client(self) -> Any:
        """Return this process's synchronous Redis client (the log writer's thread, the views), made on first use;
        None without a URL."""
        if not self.url:
            return None
        if self._sync is None:
            import redis

            self._sync = redis.Redis.from_url(self.url, socket_timeout=TIMEOUT_S, socket_connect_timeout=TIMEOUT_S)
        return self._sync

    async def aclose(self) -> None:
        """Close this loop's client (shutdown, tests)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()

    def spawn(self, coro: Any) -> None:
        """Run a write in the background (kept referenced until it ends)."""
        self.background.spawn(coro)


class SharedLRU:
    """A bounded, TTL'd map of JSON values shared across processes through Redis when configured."""

    def __init__(self, name: str, *, size: int, ttl_seconds: int, redis: SharedRedis | None = None) -> None:
        self.name = name
        self._redis = redis or SharedRedis("", "")  # none: this process's part only
        self._size = size
        self._ttl = ttl_seconds
        self._data: OrderedDict[str, tuple[float, Any]] = OrderedDict()

    def _prefix(self) -> str:
        return f"{self._redis.prefix}:{self.name}:"

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
        client = self._redis.client()
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
        client = self._redis.client()
        if client is not None:
            self._redis.spawn(self._write(client, key, value))

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

    def __init__(self, *, threshold: int, rest_seconds: float, redis: SharedRedis | None = None) -> None:
        self.threshold = threshold
        self.rest_seconds = rest_seconds
        self._redis = redis or SharedRedis("", "")  # none: this process's part only
        self._failures: dict[str, int] = {}
        self._open_until: dict[str, float] = {}
        self._shared_checked = 0.0

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
            client = self._redis.client()
            if client is not None:
                self._redis.spawn(self._publish(client, route_id, until))

    async def refresh(self) -> None:
        """Merge circuits opened by other processes (at most once a second; no-op without Redis)."""
        client = self._redis.client()
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
        return f"{self._redis.prefix}:route-health"

    async def _publish(self, client: Any, route_id: str, until: float) -> None:
        try:
            await client.hset(self._key(), route_id, str(until))
        except Exception:
            logger.debug("route health: Redis write failed", exc_info=True)
