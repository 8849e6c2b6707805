"""POST /chat/completions: one Channels AsyncHttpConsumer for streamed and non-streamed requests.

A watcher task cancels the request when the client goes away (http.disconnect) before the response
is complete, at once, and with it the upstream request. The log record is written whatever happens.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import orjson
from channels.generic.http import AsyncHttpConsumer
from django.conf import settings

from inferbase.accounts.services import api_key_hash
from inferbase.gateway.answer import answer_stream, answer_whole
from inferbase.gateway.errors import ApiError, ErrorType
from inferbase.gateway.events import SSE_DONE, error_event
from inferbase.gateway.exchange import Exchange, outcome_disconnected, outcome_with_error, request_id_new
from inferbase.gateway.guard import NO_GUARDRAILS, input_check
from inferbase.gateway.limits import LimitRefused, limits_admit, limits_settle
from inferbase.gateway.record import decision_share, record
from inferbase.gateway.route import lookups_fetch, route_request
from inferbase.gateway.state import SCOPE_KEY, AppState

from .auth import bearer_key, key_usable
from .validation import chat_request_parse

logger = logging.getLogger("inferbase.api")

SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]


class ChatCompletionsConsumer(AsyncHttpConsumer):
    """Serves one request per instance: `handle` is the request; `__call__` reads the body (refusing an
    oversized one as it arrives) and runs `handle` while a second task watches for the client going away.
    It joins no channel layer group and makes no per-message database call (see `__call__`)."""

    _stream_headers: list[tuple[bytes, bytes]] | None = None  # sent with the stream's first bytes
    _headers_sent = False
    _out: list[bytes] | None = None
    _flusher: asyncio.Task[None] | None = None
    _ending = False  # the stream is over: the flusher's last write ends the body
    _body_ended = False
    # The whole response has been handed to the server. Servers send http.disconnect when a response
    # completes (daphne does, as soon as the last body message is written), so a disconnect from
    # then on is not a client leaving early.
    _answered = False
    _arrived: tuple[float, float] | None = None  # perf_counter and wall-clock time the request arrived

    @property
    def state(self) -> AppState:
        """The application's state, which the ASGI application hands every request in its scope."""
        return self.scope[SCOPE_KEY]

    # Channels' own `AsyncConsumer.__call__` would create a channel on the layer for every request and, before
    # each message it dispatches, close stale database connections in the ORM's one thread; and it does not
    # read `receive` while `handle` runs, so a client leaving would not cancel the upstream call. Measured
    # in-process (bench/consumer_forms.py, docs/benchmarks.md), CPU per request with `handle` answering at
    # once: this `__call__` 48 us (c=1) / 28 us (c=50), Channels' 316 us / 232 us (in-memory layer): about
    # +0.2-0.27 ms per request, some 10% of what a whole gateway request costs. So the faster form stays.
    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Read the body, refusing an oversized one as it arrives, then `handle` it while a watcher cancels the
        request (and with it the upstream call) if the client goes away first."""
        self.scope = scope
        self.base_send = send
        self._arrived = (time.perf_counter(), time.time())  # the request's latency counts from here
        chunks: list[bytes] = []
        size = 0
        limit = settings.INFERBASE_MAX_BODY_BYTES
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            if message["type"] != "http.request":
                continue
            size += len(message.get("body", b""))
            if size > limit:
                await self._refuse(ApiError(413, f"The request body is larger than {limit} bytes.",
                                            code="body_too_large"))
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        task = asyncio.current_task()
        assert task is not None
        watching = asyncio.ensure_future(_cancel_on_disconnect(receive, task, lambda: self._answered))
        try:
            await self.handle(b"".join(chunks))
        except asyncio.CancelledError:
            if not (watching.done() and not watching.cancelled() and watching.result()):
                raise  # cancelled by the server, not by the client leaving
            task.uncancel()
        finally:
            watching.cancel()

    async def handle(self, body: bytes) -> None:
        """Serve one chat-completions request: answered (or refused, in the envelope) and recorded, whatever
        happens; a cancellation before the answer is complete is recorded as the client going away."""
        ex = self._exchange()
        try:
            await self._serve(ex, body)
        except ApiError as exc:
            await self._send_error(ex, exc)
        except asyncio.CancelledError:
            if not self._answered:
                ex.outcome = outcome_disconnected(ex.outcome)
            raise
        except Exception:
            logger.exception("unhandled error serving %s", ex.request_id)
            await self._send_error(ex, ApiError(500, "The gateway failed to handle the request.",
                                                code="internal_error", type=ErrorType.API))
        finally:
            record(self.state, ex)
            limits_settle(self.state, ex)

    def _exchange(self) -> Exchange:
        arrived = self._arrived
        if arrived is None:
            return Exchange(request_id=request_id_new())
        return Exchange(request_id=request_id_new(), started=arrived[0], created=arrived[1])

    async def _refuse(self, error: ApiError) -> None:
        """Answer a request refused before it is read whole, and record it."""
        ex = self._exchange()
        await self._send_error(ex, error)
        record(self.state, ex)

    async def _serve(self, ex: Exchange, body: bytes) -> None:
        if self.scope.get("method") != "POST":
            raise ApiError(405, f"Method {self.scope.get('method')} is not allowed; use POST.", code="method_not_allowed")
        raw_key = _bearer(self.scope)
        if not raw_key:
            raise ApiError(401, "Missing API key: send it as 'Authorization: Bearer inf_...'.", code="missing_api_key")
        state = self.state
        snapshot = await state.snapshot_holder.get()
        ex.key = key_usable(await state.key_cache.get(api_key_hash(raw_key)))
        try:
            decoded = orjson.loads(body) if body else None
        except orjson.JSONDecodeError as exc:
            raise ApiError(400, f"The request body is not valid JSON: {exc}", code="invalid_json") from exc
        if decoded is None:
            raise ApiError(400, "The request body is empty; send a JSON chat-completions request.", code="invalid_json")
        ex.chat = chat_request_parse(decoded)
        route_request(state, ex, snapshot, await lookups_fetch(state, ex.chat))
        assert ex.routed is not None
        ex.guardrails = state.snapshot_holder.billing.guardrails.get(ex.routed.decision.policy.id, NO_GUARDRAILS)
        await limits_admit(state, ex)  # once, before any upstream call: a fallback never counts twice
        input_check(ex)  # a block is a 400 here, before any upstream call
        if ex.chat.stream:
            # The headers go with the first bytes the stream emits: until then a failure is still
            # answered with its own status.
            self._stream_headers = [*SSE_HEADERS, (b"x-request-id", ex.request_id.encode()),
                                    *_encoded(ex.limit_headers)]
            try:
                await answer_stream(state, ex, self._emit)
            except BaseException:
                await self._flush()
                raise
            self._answered = True  # every event, [DONE] included, is emitted: the rest is writing
            await self._flush(end=True)
            return
        response = await answer_whole(state, ex)
        await decision_share(state, ex)
        await self.send_response(
            200,
            orjson.dumps(response),
            headers=[
                (b"content-type", b"application/json"),
                (b"x-request-id", ex.request_id.encode()),
                (b"x-inferbase-model", response["model"].encode()),
                (b"x-inferbase-cost-micros", str(response["usage"]["cost_micros"]).encode()),
                (b"x-inferbase-latency-ms", str(response["usage"]["latency_ms"]).encode()),
                *_encoded(ex.limit_headers),
            ],
        )

    async def send_body(self, body: bytes, *, more_body: bool = False) -> None:
        if not more_body:
            self._answered = True
        await super().send_body(body, more_body=more_body)

    def _emit(self, data: bytes) -> None:
        # Written as soon as the loop turns, together with whatever else is already at hand (when the
        # upstream delivered several chunks in one read): fewer writes, and no added wait.
        if self._out is None:
            self._out = []
        self._out.append(data)
        if self._flusher is None:
            self._flusher = asyncio.ensure_future(self._write_out())

    async def _write_out(self) -> None:
        try:
            while self._out:
                await asyncio.sleep(0)
                data = b"".join(self._out)
                self._out.clear()
                last = self._ending and not self._out
                await self._send_stream(data, more_body=not last)
                self._body_ended = last
        finally:
            self._flusher = None

    async def _flush(self, *, end: bool = False) -> None:
        """Hand over everything emitted so far; with `end`, end the body too, in the pending
        flusher's write when there is one."""
        if end:
            self._ending = True
        flusher = self._flusher
        if flusher is not None:
            await asyncio.shield(flusher)
        if self._body_ended or not (self._out or end):
            return
        data = b"".join(self._out) if self._out else b""
        if self._out:
            self._out.clear()
        await self._send_stream(data, more_body=not end)
        self._body_ended = end

    async def _send_stream(self, data: bytes, *, more_body: bool) -> None:
        if not self._headers_sent:
            self._headers_sent = True
            await self.send_headers(status=200, headers=self._stream_headers)
        await self.send_body(data, more_body=more_body)

    async def _send_error(self, ex: Exchange, exc: ApiError) -> None:
        ex.outcome = outcome_with_error(ex.outcome, exc)
        await decision_share(self.state, ex)
        if self._out is not None:  # the stream has started: the error is its last event
            self._emit(error_event(exc) + SSE_DONE)
            await self._flush(end=True)
            return
        headers = [(b"content-type", b"application/json"), (b"x-request-id", ex.request_id.encode())]
        if exc.status == 405:
            headers.append((b"allow", b"POST"))
        if isinstance(exc, LimitRefused):
            headers += _encoded(exc.headers)
        await self.send_response(exc.status, orjson.dumps(exc.envelope()), headers=headers)


async def _cancel_on_disconnect(receive: Any, task: asyncio.Task[Any], answered: Callable[[], bool]) -> bool:
    """Cancel `task` when the client goes away before the response is complete; return whether it did."""
    while (await receive())["type"] != "http.disconnect":
        pass
    if answered():
        return False
    task.cancel()
    return True


def _encoded(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(name.encode(), value.encode()) for name, value in headers.items()]


def _bearer(scope: dict[str, Any]) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            return bearer_key(value.decode("latin-1"))
    return None
