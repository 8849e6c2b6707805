"""The shared upstream client over a real socket: it keeps no cookies between requests (the next
request may be another customer's) and reuses its connection."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from providers.http import UpstreamClients
from providers.transport import endpoint


@pytest.fixture
async def cookie_server() -> AsyncIterator[tuple[str, list[dict[str, str]]]]:
    seen: list[dict[str, str]] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append({"cookie": request.headers.get("Cookie", ""), "peer": str(request.transport.get_extra_info("peername"))})
        response = web.json_response({"ok": True})
        response.set_cookie("session", f"customer-{len(seen)}", path="/")
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://127.0.0.1:{port}/v1", seen
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
async def test_an_upstream_cookie_is_not_sent_with_the_next_request(
        cookie_server: tuple[str, list[dict[str, str]]], transport: str) -> None:
    base, seen = cookie_server
    clients = UpstreamClients(transport)
    client = clients.client()
    try:
        for _ in range(3):
            response = await client.post(endpoint(base, "/chat/completions"), content=b"{}")
            assert response.status_code == 200 and "session=customer-" in response.headers["set-cookie"]
        assert [s["cookie"] for s in seen] == ["", "", ""]
        assert len(client.cookies) == 0
        assert len({s["peer"] for s in seen}) == 1  # one kept-alive connection for the three requests
        assert clients.client() is client  # the same client for every request on this loop
    finally:
        await clients.aclose()
