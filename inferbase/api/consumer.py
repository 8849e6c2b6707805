"""POST /chat/completions: one Channels AsyncHttpConsumer for streamed and non-streamed requests.

A watcher task cancels the request when the client goes away (http.disconnect), at once, and with
it the upstream request. The log record is written whatever happens.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import orjson
from channels.generic.http import AsyncHttpConsumer
from django.conf import settings

from inferbase.accounts.services import api_key_hash
from inferbase.gateway import pipeline
from inferbase.gateway.state import key_cache, snapshot_holder

from .auth import bearer_key, key_usable
from .errors import ApiError, ErrorType
from .validation import chat_request_parse

logger = logging.getLogger("inferbase.api")

SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]


class ChatCompletionsConsumer(AsyncHttpConsumer):
    """Serves one request per instance. Its own `__call__` reads the body (refusing an oversized one
    as it arrives), runs the request while a second task watches for the client going away; it joins
    no channel layer group and makes no per-message database call."""

    _headers_sent = False
    _out: list[bytes] | None = None
    _flusher: asyncio.Task[None] | None = None
    _ending = False  # the stream is over: the flusher's last write ends the body
    _body_ended = False

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        self.scope = scope
        self.base_send = send
        ex = pipeline.Exchange(request_id=pipeline.request_id_new())
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
                await self._send_error(ex, ApiError(413, f"The request body is larger than {limit} bytes.",
                                                    code="body_too_large"))
                pipeline.record(ex)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        # The request runs in this task; a watcher cancels it if the client goes away first, and with
        # it the upstream call.
        task = asyncio.current_task()
        assert task is not None
        watching = asyncio.ensure_future(_cancel_on_disconnect(receive, task))
        try:
            await self._serve(ex, b"".join(chunks))
        except asyncio.CancelledError:
            if not (watching.done() and not watching.cancelled()):
                raise  # cancelled by the server, not by the client leaving
            task.uncancel()
        finally:
            watching.cancel()

    async def _serve(self, ex: pipeline.Exchange, body: bytes) -> None:
        try:
            await self._serve_inner(ex, body)
        except ApiError as exc:
            await self._send_error(ex, exc)
        except asyncio.CancelledError:
            if not self._body_ended:  # after the whole answer, the disconnect the server reports is no failure
                ex.client_disconnected = True
                ex.disposition = "client_disconnected"
                ex.status_code = 499
            raise
        except Exception:
            logger.exception("unhandled error serving %s", ex.request_id)
            await self._send_error(ex, ApiError(500, "The gateway failed to handle the request.",
                                                code="internal_error", type=ErrorType.API))
        finally:
            pipeline.record(ex)

    async def _serve_inner(self, ex: pipeline.Exchange, body: bytes) -> None:
        if self.scope.get("method") != "POST":
            raise ApiError(405, f"Method {self.scope.get('method')} is not allowed; use POST.", code="method_not_allowed")
        raw_key = _bearer(self.scope)
        if not raw_key:
            raise ApiError(401, "Missing API key: send it as 'Authorization: Bearer inf_...'.", code="missing_api_key")
        snapshot = await snapshot_holder.get()
        ex.key = key_usable(await key_cache.get(api_key_hash(raw_key)))
        try:
            decoded = orjson.loads(body) if body else None
        except orjson.JSONDecodeError as exc:
            raise ApiError(400, f"The request body is not valid JSON: {exc}", code="invalid_json") from exc
        if decoded is None:
            raise ApiError(400, "The request body is empty; send a JSON chat-completions request.", code="invalid_json")
        ex.chat = chat_request_parse(decoded)
        pipeline.route_request(ex, snapshot, await pipeline.lookups_fetch(ex.chat))
        if ex.chat.stream:
            await self.send_headers(status=200, headers=[*SSE_HEADERS, (b"x-request-id", ex.request_id.encode())])
            self._headers_sent = True
            try:
                await pipeline.stream(ex, self._emit)
            except BaseException:
                await self._flush()
                raise
            await self._flush(end=True)
            return
        response = await pipeline.complete(ex)
        ex.status_code = 200
        await self.send_response(
            200,
            orjson.dumps(response),
            headers=[
                (b"content-type", b"application/json"),
                (b"x-request-id", ex.request_id.encode()),
                (b"x-inferbase-model", response["model"].encode()),
                (b"x-inferbase-cost-micros", str(response["usage"]["cost_micros"]).encode()),
                (b"x-inferbase-latency-ms", str(response["usage"]["latency_ms"]).encode()),
            ],
        )

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
                await self.send_body(data, more_body=not last)
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
        await self.send_body(data, more_body=not end)
        self._body_ended = end

    async def _send_error(self, ex: pipeline.Exchange, exc: ApiError) -> None:
        ex.status_code = exc.status
        ex.error_code = exc.code
        if ex.disposition == "served":
            ex.disposition = "rejected" if exc.status < 500 else exc.code
        if self._headers_sent:
            self._emit(pipeline.sse({"object": "error", "error": exc.envelope()["error"]}) + pipeline.SSE_DONE)
            await self._flush(end=True)
            return
        headers = [(b"content-type", b"application/json"), (b"x-request-id", ex.request_id.encode())]
        if exc.status == 405:
            headers.append((b"allow", b"POST"))
        await self.send_response(exc.status, orjson.dumps(exc.envelope()), headers=headers)


async def _cancel_on_disconnect(receive: Any, task: asyncio.Task[Any]) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    task.cancel()


def _bearer(scope: dict[str, Any]) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            return bearer_key(value.decode("latin-1"))
    return None
