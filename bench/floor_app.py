"""The floor: a bare Channels AsyncHttpConsumer that parses the body and forwards it to the upstream.

One shared httpx.AsyncClient over the aiohttp transport (as the gateway uses), served by daphne:

    BENCH_UPSTREAM=http://127.0.0.1:9100 daphne -p 9200 bench.floor_app:application

No auth, no validation, no routing, no logging: what any Channels proxy on this stack costs at least."""

from __future__ import annotations

import json
import os

import django
from django.conf import settings

if not settings.configured:
    settings.configure(DEBUG=False, INSTALLED_APPS=[], ALLOWED_HOSTS=["*"], USE_TZ=True)
    django.setup()

import httpx  # noqa: E402
from channels.generic.http import AsyncHttpConsumer  # noqa: E402
from httpx_aiohttp import AiohttpTransport  # noqa: E402

from providers.lifespan import lifespan_serve  # noqa: E402

UPSTREAM = os.environ.get("BENCH_UPSTREAM", "http://127.0.0.1:9100").rstrip("/") + "/openai/v1/chat/completions"
_client: httpx.AsyncClient | None = None


def client() -> httpx.AsyncClient:
    global _client
    if _client is None:
        _client = httpx.AsyncClient(
            transport=AiohttpTransport(),
            timeout=httpx.Timeout(connect=10.0, read=None, write=30.0, pool=30.0),
            limits=httpx.Limits(max_connections=1000, max_keepalive_connections=200, keepalive_expiry=30),
        )
    return _client


class FloorConsumer(AsyncHttpConsumer):
    async def handle(self, body: bytes) -> None:
        payload = json.loads(body)
        if payload.get("stream"):
            async with client().stream("POST", UPSTREAM, json=payload) as response:
                await self.send_headers(status=response.status_code, headers=[
                    (b"Content-Type", b"text/event-stream"), (b"Cache-Control", b"no-cache")])
                async for chunk in response.aiter_raw():
                    await self.send_body(chunk, more_body=True)
            await self.send_body(b"", more_body=False)
            return
        response = await client().post(UPSTREAM, json=payload)
        await self.send_response(response.status_code, response.content,
                                 headers=[(b"Content-Type", b"application/json")])


_consumer = FloorConsumer.as_asgi()


async def application(scope, receive, send):  # type: ignore[no-untyped-def]
    if scope["type"] == "http":
        return await _consumer(scope, receive, send)
    if scope["type"] == "lifespan":
        return await lifespan_serve(receive, send)
