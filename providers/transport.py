"""The HTTP boundary both adapters share: send, bound the wait, translate httpx errors and statuses."""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing, asynccontextmanager
from functools import lru_cache
from typing import Any

import aiohttp
import httpx
import orjson

from .base import CallOptions
from .errors import (
    CONNECTION_CAUSES,
    FirstTokenTimeout,
    UpstreamConnectError,
    UpstreamError,
    UpstreamMalformed,
    UpstreamStatusError,
    UpstreamTimeout,
)
from .sse import SSEDecoder


def remaining(deadline: float) -> float:
    """Return the seconds left before a `time.monotonic()` deadline (never zero, so waits stay valid)."""
    return max(0.001, deadline - time.monotonic())


@lru_cache(maxsize=1024)
def endpoint(base_url: str, path: str) -> httpx.URL:
    """The parsed URL of `base_url` + `path`, parsed once per route rather than once per request."""
    return httpx.URL(base_url + path)


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


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and what raised it, outermost first."""
    links: list[BaseException] = []
    link: BaseException | None = exc
    while link is not None and link not in links:
        links.append(link)
        link = link.__cause__ or link.__context__
    return links


def _connection_cause(link: BaseException) -> str | None:
    """The CONNECTION_CAUSES key one exception of the chain stands for, or None."""
    if isinstance(link, ssl.SSLError | aiohttp.ClientSSLError):
        return "tls_failure"
    if isinstance(link, socket.gaierror | aiohttp.ClientConnectorDNSError):
        return "dns_failure"
    if isinstance(link, ConnectionRefusedError):
        return "connection_refused"
    if isinstance(link, ConnectionResetError | ConnectionAbortedError | BrokenPipeError
                  | aiohttp.ServerDisconnectedError):
        return "connection_reset"
    return None


def transport_failure(exc: httpx.TransportError, *, during_answer: bool = False) -> UpstreamError:
    """Translate an httpx transport error by what really raised it: a timeout, or a connection that was
    refused, reset, failed DNS or TLS (or, `during_answer`, was lost mid-answer).

    The exception's own class is not enough: the aiohttp transport maps every aiohttp connection
    error, a refused connection included, to httpx.ConnectTimeout; the cause chain says what it was."""
    chain = _chain(exc)
    names = " <- ".join(link.__class__.__name__ for link in chain)
    cause = None
    for link in chain:
        cause = _connection_cause(link)
        if cause is not None or isinstance(link, TimeoutError):
            break
    if cause is None:
        from_aiohttp = any(isinstance(link, aiohttp.ClientError) for link in chain)
        timed_out = any(isinstance(link, TimeoutError) for link in chain) or (
            isinstance(exc, httpx.TimeoutException) and not from_aiohttp)
        if timed_out:
            return UpstreamTimeout(f"upstream timed out ({names})")
        cause = "connect_error"
    if during_answer:
        return UpstreamConnectError(f"upstream stream broke: {CONNECTION_CAUSES[cause]} ({names})",
                                    cause="connection_lost")
    return UpstreamConnectError(f"could not reach the upstream: {CONNECTION_CAUSES[cause]} ({names})", cause=cause)


@asynccontextmanager
async def _translated(budget: float, error: type[UpstreamTimeout], waiting_for: str) -> AsyncIterator[None]:
    """Bound a wait to `budget` seconds and turn httpx's and asyncio's errors into UpstreamError ones."""
    try:
        async with asyncio.timeout(budget):
            yield
    except TimeoutError as exc:
        raise error(f"no {waiting_for} within {budget:.1f}s") from exc
    except httpx.TransportError as exc:
        raise transport_failure(exc) from exc


async def post(client: httpx.AsyncClient, url: str | httpx.URL, *, content: bytes, headers: dict[str, str],
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


class _Silence:
    """One timer per stream bounding each wait on the upstream, instead of a new `asyncio.timeout`
    (a Timeout object and a scheduled timer) for every event. A wait may last its own number of
    seconds from its start. The timer re-arms itself while the current wait is within its limit, and
    cancels the task only when a wait overruns it; `overran` then tells that cancellation apart from
    any other (a client that went away)."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        self._task = task
        self._cancelling = task.cancelling()
        self._handle: asyncio.TimerHandle | None = None
        self._ends: float | None = None  # loop time by which the current wait must end
        self._expired = False

    def start(self, seconds: float) -> None:
        """A wait of at most `seconds` begins."""
        now = self._loop.time()
        self._ends = now + seconds
        if self._handle is not None and self._handle.when() > self._ends:
            self._handle.cancel()  # this wait is shorter than the timer armed for an earlier one
            self._handle = None
        if self._handle is None:
            self._handle = self._loop.call_at(self._ends, self._fire)

    def stop(self) -> None:
        self._ends = None

    def overran(self) -> bool:
        """After a CancelledError: True when this timer caused it and nothing else asked to cancel."""
        return self._expired and self._task.uncancel() <= self._cancelling

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self) -> None:
        self._handle = None
        if self._ends is None:
            return  # not waiting now: the next wait arms the timer again
        if self._loop.time() < self._ends:
            self._handle = self._loop.call_at(self._ends, self._fire)
            return
        self._expired = True
        self._task.cancel()


def _body_chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    """The body as it arrives: raw when it is not content-encoded (two fewer layers per read); decoded,
    or from memory when it was already read, otherwise."""
    if not response.is_stream_consumed and response.headers.get("content-encoding", "identity") in ("identity", ""):
        return response.aiter_raw()
    return response.aiter_bytes()


async def timed_events(response: httpx.Response | Callable[[], Awaitable[httpx.Response]], options: CallOptions,
                       first_deadline: float, carries_token: Callable[[dict[str, Any]], bool], *,
                       done: bytes | None = None,
                       error_in: Callable[[dict[str, Any]], str | None] | None = None) -> AsyncIterator[dict[str, Any]]:
    """Yield a streamed response's events as JSON objects, waiting until `first_deadline` for the first
    token, then at most the idle timeout between reads, never past `options.deadline`.

    `response` is an open response, or a function that opens one (`open_stream`): then it is opened
    on the first iteration and closed when the iteration ends, so that an adapter hands this generator
    to its caller without a generator of its own around it (one less layer for every event).
    With `done` (OpenAI's `[DONE]`) the stream must end with it: the rest of the body is drained so
    the connection is reused, and a stream cut before it is malformed. `error_in` names an event that
    reports an error mid-stream (asked only of events with an `error` field). Errors are UpstreamError only."""
    opened = None
    if not isinstance(response, httpx.Response):
        response = opened = await response()
    silence = _Silence()
    decoder = SSEDecoder()
    try:
        async with aclosing(_body_chunks(response)) as body:
            got_token = False
            while True:
                wait = min(options.idle_timeout, remaining(options.deadline)) if got_token else remaining(first_deadline)
                silence.start(wait)
                try:
                    chunk = await anext(body)
                except StopAsyncIteration:
                    if done is not None:
                        raise UpstreamMalformed(f"stream ended without {done.decode()}") from None
                    return
                except asyncio.CancelledError as exc:
                    if not silence.overran():
                        raise
                    if got_token:
                        raise UpstreamTimeout(f"upstream sent nothing for {wait:.1f}s") from exc
                    raise FirstTokenTimeout(f"no first token within {options.first_token_timeout:.1f}s") from exc
                except httpx.TransportError as exc:
                    raise transport_failure(exc, during_answer=True) from exc
                finally:
                    silence.stop()
                for _name, data in decoder.feed(chunk):
                    if data == done:
                        await drain(body)
                        return
                    try:
                        event = orjson.loads(data)
                    except orjson.JSONDecodeError as exc:
                        raise UpstreamMalformed("upstream sent a stream event that is not JSON") from exc
                    if not isinstance(event, dict):
                        raise UpstreamMalformed("upstream sent a stream event that is not an object")
                    if error_in is not None and "error" in event and (message := error_in(event)) is not None:
                        raise UpstreamError(message)
                    if not got_token and carries_token(event):
                        got_token = True
                    yield event
    finally:
        silence.close()
        if opened is not None:
            await opened.aclose()
