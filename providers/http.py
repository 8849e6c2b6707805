"""One shared httpx.AsyncClient per event loop (so per process under daphne), pooled."""

from __future__ import annotations

import asyncio
import weakref

import httpx

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()


def _build(transport_name: str) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=1000, max_keepalive_connections=200, keepalive_expiry=30)
    timeout = httpx.Timeout(connect=10.0, read=None, write=30.0, pool=30.0)
    if transport_name == "aiohttp":
        from httpx_aiohttp import AiohttpTransport

        return httpx.AsyncClient(transport=AiohttpTransport(), timeout=timeout, limits=limits)
    return httpx.AsyncClient(timeout=timeout, limits=limits)


def shared_client(transport_name: str = "aiohttp") -> httpx.AsyncClient:
    """Return this event loop's shared client, creating it on first use."""
    loop = asyncio.get_running_loop()
    client = _clients.get(loop)
    if client is None or client.is_closed:
        client = _build(transport_name)
        _clients[loop] = client
    return client


async def close_shared_client() -> None:
    """Close this event loop's client (tests and shutdown)."""
    loop = asyncio.get_running_loop()
    client = _clients.pop(loop, None)
    if client is not None:
        await client.aclose()
