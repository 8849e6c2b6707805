"""One shared httpx.AsyncClient per event loop (so per process under daphne), pooled, held by `UpstreamClients`."""

from __future__ import annotations

import asyncio
import weakref

import httpx


class _NoCookies(httpx.Cookies):
    """The shared client keeps no cookies: one upstream answer's Set-Cookie must not travel with the
    next request, which may be another customer's. (It also spares a cookie-jar parse per answer.)"""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None


MAX_CONNECTIONS = 1000
# Idle pooled connections are dropped after this long: under the 5 s keep-alive that uvicorn, Node and
# many other servers close idle connections at, so that a request is not sent on a connection the
# upstream is closing at that moment (which fails it, and counts against the route's health).
KEEPALIVE_SECONDS = 4.0


def _aiohttp_session() -> object:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=MAX_CONNECTIONS, keepalive_timeout=KEEPALIVE_SECONDS,
                                     ssl=httpx.create_ssl_context())
    return aiohttp.ClientSession(connector=connector, cookie_jar=aiohttp.DummyCookieJar())


def _build(transport_name: str) -> httpx.AsyncClient:
    limits = httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=200,
                          keepalive_expiry=KEEPALIVE_SECONDS)
    timeout = httpx.Timeout(connect=10.0, read=None, write=30.0, pool=30.0)
    if transport_name == "aiohttp":
        from httpx_aiohttp import AiohttpTransport

        # The session is built on first use, inside the serving loop; it keeps no cookies either.
        client = httpx.AsyncClient(transport=AiohttpTransport(client=_aiohttp_session), timeout=timeout,
                                   limits=limits)
    else:
        client = httpx.AsyncClient(timeout=timeout, limits=limits)
    client._cookies = _NoCookies()  # the `cookies` setter would copy into a plain Cookies
    return client


class UpstreamClients:
    """The upstream clients of one application: one pooled client per event loop, built on first use there.
    A `transport` given replaces the network (tests hand in an `httpx.MockTransport` or an `ASGITransport`)."""

    def __init__(self, transport_name: str = "aiohttp", *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._transport_name = transport_name
        self._transport = transport
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
            weakref.WeakKeyDictionary())

    def client(self) -> httpx.AsyncClient:
        """Return this event loop's shared client, creating it on first use."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None or client.is_closed:
            client = _build(self._transport_name) if self._transport is None else httpx.AsyncClient(
                transport=self._transport, timeout=httpx.Timeout(None))
            self._clients[loop] = client
        return client

    async def aclose(self) -> None:
        """Close this event loop's client (shutdown, tests)."""
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()
