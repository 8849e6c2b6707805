"""The HTTP boundary both adapters share: send, bound the wait, translate httpx errors and statuses."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing, asynccontextmanager
from typing import Any

import httpx
import orjson

from .base import CallOptions
from .errors import (
    FirstTokenTimeout,
    UpstreamConnectError,
    UpstreamMalformed,
    UpstreamStatusError,
    UpstreamTimeout,
)
from .sse import iter_sse_bytes


def remaining(deadline: float) -> float:
    """Return the seconds left before a `time.monotonic()` deadline (never zero, so waits stay valid)."""
    return max(0.001, deadline - time.monotonic())


def error_message(status: int, raw: bytes) -> str:
    """Return the upstream's own error message when its body carries one (OpenAI and Anthropic shapes)."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        data = None
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and error.get("message"):
        kind = error.get("type")
        message = str(error["message"])[:500]
        return f"{kind}: {message}" if kind else message
    return f"upstream answered HTTP {status}"


@asynccontextmanager
async def _translated(budget: float, error: type[UpstreamTimeout], waiting_for: str) -> AsyncIterator[None]:
    """Bound a wait to `budget` seconds and turn httpx's and asyncio's errors into UpstreamError ones."""
    try:
        async with asyncio.timeout(budget):
            yield
    except TimeoutError as exc:
        raise error(f"no {waiting_for} within {budget:.1f}s") from exc
    except httpx.TimeoutException as exc:
        raise UpstreamTimeout(f"upstream timed out: {exc.__class__.__name__}") from exc
    except httpx.TransportError as exc:
        raise UpstreamConnectError(f"could not reach the upstream: {exc.__class__.__name__}") from exc


async def post(client: httpx.AsyncClient, url: str, *, content: bytes, headers: dict[str, str],
               budget: float) -> httpx.Response:
    """POST and read the whole answer within `budget` seconds; raise UpstreamError subclasses only."""
    async with _translated(budget, UpstreamTimeout, "answer"):
        response = await client.post(url, content=content, headers=headers)
    if response.status_code >= 400:
        raise UpstreamStatusError(error_message(response.status_code, response.content),
                                  status=response.status_code, body=response.text[:1000])
    return response


async def open_stream(client: httpx.AsyncClient, request: httpx.Request, *, budget: float) -> httpx.Response:
    """Send a streamed request and wait at most `budget` seconds for its headers; an error status is
    read, closed and raised. The caller closes the returned response."""
    async with _translated(budget, FirstTokenTimeout, "first token"):
        response = await client.send(request, stream=True)
    if response.status_code >= 400:
        try:
            raw = await response.aread()
        finally:
            await response.aclose()
        raise UpstreamStatusError(error_message(response.status_code, raw), status=response.status_code,
                                  body=raw[:1000].decode(errors="replace"))
    return response


async def drain(events: AsyncIterator[object], *, seconds: float = 1.0) -> None:
    """Read what is left of a finished stream (its closing bytes) so that the connection goes back
    to the pool: closed before the end of its body, it would be dropped, and the next request would
    pay for a new connection."""
    try:
        async with asyncio.timeout(seconds):
            async for _ in events:
                pass
    except (TimeoutError, httpx.HTTPError):
        pass


async def timed_events(response: httpx.Response, options: CallOptions, first_deadline: float,
                       carries_token: Callable[[dict[str, Any]], bool], *,
                       done: bytes | None = None) -> AsyncIterator[dict[str, Any]]:
    """Yield a streamed response's events as JSON objects, waiting until `first_deadline` for the first
    token, then at most the idle timeout between events, never past `options.deadline`.

    With `done` (OpenAI's `[DONE]`) the stream must end with it: the rest of the body is drained so
    the connection is reused, and a stream cut before it is malformed. Errors are UpstreamError only."""
    async with aclosing(iter_sse_bytes(response.aiter_bytes())) as sse:
        got_token = False
        while True:
            wait = min(options.idle_timeout, remaining(options.deadline)) if got_token else remaining(first_deadline)
            try:
                async with asyncio.timeout(wait):
                    _name, data = await anext(sse)
            except StopAsyncIteration:
                if done is not None:
                    raise UpstreamMalformed(f"stream ended without {done.decode()}") from None
                return
            except TimeoutError as exc:
                if got_token:
                    raise UpstreamTimeout(f"upstream sent nothing for {wait:.1f}s") from exc
                raise FirstTokenTimeout(f"no first token within {options.first_token_timeout:.1f}s") from exc
            except httpx.TimeoutException as exc:
                raise UpstreamTimeout("upstream stream timed out") from exc
            except httpx.TransportError as exc:
                raise UpstreamConnectError(f"upstream stream broke: {exc.__class__.__name__}") from exc
            if data == done:
                await drain(sse)
                return
            try:
                event = orjson.loads(data)
            except orjson.JSONDecodeError as exc:
                raise UpstreamMalformed("upstream sent a stream event that is not JSON") from exc
            if not isinstance(event, dict):
                raise UpstreamMalformed("upstream sent a stream event that is not an object")
            if not got_token and carries_token(event):
                got_token = True
            yield event
