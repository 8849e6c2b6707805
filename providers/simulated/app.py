"""The simulated upstream as a plain ASGI application (no framework, so it stays fast)."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any, Protocol
from urllib.parse import parse_qs

import orjson

from ..lifespan import lifespan_serve
from .anthropic_wire import AnthropicWire
from .directives import Directives, parse_directives
from .openai_wire import OpenAIWire
from .plan import Plan, SimRequest, WireError, build_plan
from .profiles import SimProfile, profile_for

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

logger = logging.getLogger(__name__)

_SSE_HEADERS = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]


class StreamRenderer(Protocol):
    def head(self) -> bytes: ...
    def piece(self, kind: str, fragment: str) -> bytes: ...
    def tail(self) -> bytes: ...
    def garbage(self) -> bytes: ...


class Wire(Protocol):
    name: str

    def parse(self, body: Mapping[str, Any]) -> SimRequest: ...
    def error_body(
        self, status: int, message: str, *, kind: str | None = None, code: str | None = None
    ) -> bytes: ...
    def model_not_found(self, model: str) -> WireError: ...
    def has_images(self, body: Mapping[str, Any]) -> bool: ...
    def complete(self, plan: Plan, req: SimRequest, response_id: str) -> bytes: ...
    def stream(
        self, plan: Plan, req: SimRequest, response_id: str, body: Mapping[str, Any]
    ) -> StreamRenderer: ...
    def models(self, ids: list[str]) -> bytes: ...


class SimulatedDrop(Exception):
    """Raised mid-stream on purpose: the server then closes the connection without finishing the body."""


class _ClientWatch:
    """Notice the client going away while we wait, without polling."""

    def __init__(self, receive: Receive) -> None:
        self._receive = receive
        self._task: asyncio.Task[None] | None = None
        self.gone = False

    async def _watch(self) -> None:
        try:
            while True:
                message = await self._receive()
                if message["type"] == "http.disconnect":
                    break
        except Exception:  # a server that cannot receive any more has lost the client too
            pass
        self.gone = True

    async def sleep(self, seconds: float) -> bool:
        """Wait `seconds`; return True as soon as the client has disconnected."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._watch())
        if not self.gone and seconds > 0:
            await asyncio.wait((self._task,), timeout=seconds)
        return self.gone

    def close(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()


class SimulatedUpstream:
    """ASGI app speaking the OpenAI and Anthropic wires with per-model behaviour; see `build_app`."""

    def __init__(self, profiles: Mapping[str, SimProfile], time_scale: float, record_requests: int = 0) -> None:
        self.profiles = dict(profiles)
        self.time_scale = max(float(time_scale), 0.0)
        self._openai = OpenAIWire()
        self._anthropic = AnthropicWire()
        self._ids = itertools.count(1)
        self._requests = 0
        self._by_tag: dict[str, dict[str, int]] = {}
        # Off unless asked for (tests): the last `record_requests` bodies received, for GET /debug/requests.
        self._received: deque[dict[str, Any]] | None = deque(maxlen=record_requests) if record_requests > 0 else None

    # -- request log ----------------------------------------------------------------------------
    def received(self, tag: str | None = None) -> list[dict[str, Any]]:
        """Return the recorded requests, oldest first (`{"wire", "tag", "body"}`), those with `tag` when given."""
        if self._received is None:
            return []
        return [r for r in self._received if tag is None or r["tag"] == tag]

    # -- stats ----------------------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """Return `{"requests": n, "by_tag": {tag: {"started", "completed", "cancelled", "failed"}}}`."""
        return {"requests": self._requests, "by_tag": {k: dict(v) for k, v in self._by_tag.items()}}

    def reset_stats(self) -> None:
        self._requests = 0
        self._by_tag = {}

    def _count(self, tag: str, what: str) -> None:
        bucket = self._by_tag.get(tag)
        if bucket is None:
            bucket = self._by_tag[tag] = {"started": 0, "completed": 0, "cancelled": 0, "failed": 0}
        bucket[what] += 1

    # -- ASGI -----------------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan_serve(receive, send)
            return
        if scope["type"] != "http":
            return
        path: str = scope["path"]
        root = scope.get("root_path") or ""
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
        path = path.rstrip("/") or "/"
        method = scope["method"]
        if method == "POST" and path == "/openai/v1/chat/completions":
            await self._generate(self._openai, receive, send)
        elif method == "POST" and path == "/anthropic/v1/messages":
            await self._generate(self._anthropic, receive, send)
        elif method == "GET" and path == "/openai/v1/models":
            await _send_bytes(send, 200, self._openai.models(sorted(self.profiles)))
        elif method == "GET" and path == "/anthropic/v1/models":
            await _send_bytes(send, 200, self._anthropic.models(sorted(self.profiles)))
        elif method == "GET" and path == "/health":
            await _send_bytes(send, 200, orjson.dumps({"status": "ok", "simulated": True}))
        elif method == "GET" and path == "/stats":
            await _send_bytes(send, 200, orjson.dumps(self.stats()))
        elif method == "POST" and path == "/stats/reset":
            self.reset_stats()
            await _send_bytes(send, 200, orjson.dumps(self.stats()))
        elif method == "GET" and path == "/debug/requests" and self._received is not None:
            tag = _query_value(scope.get("query_string", b""), b"tag")
            await _send_bytes(send, 200, orjson.dumps({"data": self.received(tag)}))
        else:
            await _send_bytes(send, 404, orjson.dumps({"error": {"message": f"no route {method} {path}"}}))

    # -- generation -----------------------------------------------------------------------------
    async def _generate(self, wire: Wire, receive: Receive, send: Send) -> None:
        raw = await _read_body(receive)
        if raw is None:
            return
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            body = None
        if not isinstance(body, dict):
            await _send_bytes(send, 400, wire.error_body(400, "the request body is not a JSON object"))
            return
        try:
            req = wire.parse(body)
        except WireError as exc:
            await _send_bytes(
                send, exc.status, wire.error_body(exc.status, exc.message, kind=exc.kind, code=exc.code)
            )
            return
        directives = parse_directives(req.last_user_text, req.model)
        if self._received is not None:
            self._received.append({"wire": wire.name, "tag": directives.tag, "body": body})
        self._requests += 1
        self._count(directives.tag, "started")
        watch = _ClientWatch(receive)
        try:
            outcome = await self._answer(wire, body, req, directives, watch, send)
        except SimulatedDrop:
            self._count(directives.tag, "failed")
            raise
        finally:
            watch.close()
        self._count(directives.tag, outcome)

    async def _answer(
        self,
        wire: Wire,
        body: dict[str, Any],
        req: SimRequest,
        directives: Directives,
        watch: _ClientWatch,
        send: Send,
    ) -> str:
        """Send the whole response; return the stats outcome: completed, cancelled or failed."""
        if directives.stall_ms and await watch.sleep(directives.stall_ms / 1000):
            return "cancelled"
        profile = profile_for(self.profiles, req.model)
        error: WireError | None = None
        if req.model.startswith("missing-"):
            error = wire.model_not_found(req.model)
        elif directives.fail:
            error = WireError(directives.fail, f"simulated failure {directives.fail}")
        elif not profile.vision and wire.has_images(body):
            error = WireError(400, f"model {req.model} does not support image input")
        if error is not None:
            headers = [(b"retry-after", b"1")] if error.status == 429 else []
            body_bytes = wire.error_body(error.status, error.message, kind=error.kind, code=error.code)
            await _send_bytes(send, error.status, body_bytes, headers)
            return "failed"

        plan = build_plan(req, profile, directives)
        response_id = f"sim-{next(self._ids):x}{plan.seed & 0xFFFFFFFF:08x}"
        scale = self.time_scale
        ttft = profile.ttft_ms / 1000 * scale
        per_token = scale / profile.tokens_per_second

        if not body.get("stream"):
            if directives.fail_at_chunk is not None:
                await _send_bytes(send, 500, wire.error_body(500, "simulated failure mid-answer"))
                return "failed"
            delay = ttft + per_token * plan.completion_tokens
            if delay > 0 and await watch.sleep(delay):
                return "cancelled"
            if directives.malformed:
                await _send_bytes(send, 200, b"<html>simulated malformed body", [], b"application/json")
                return "completed"
            await _send_bytes(send, 200, wire.complete(plan, req, response_id))
            return "completed"

        renderer = wire.stream(plan, req, response_id, body)
        pieces = plan.pieces()
        idle_at = len(pieces) // 2 if directives.idle_ms else -1
        try:
            await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
            await send({"type": "http.response.body", "body": renderer.head(), "more_body": True})
            if directives.malformed:
                await send({"type": "http.response.body", "body": renderer.garbage(), "more_body": True})
            for i, (kind, fragment, n_tokens) in enumerate(pieces):
                delay = ttft if i == 0 else per_token * n_tokens
                if (delay > 0 or watch.gone) and await watch.sleep(delay):
                    return "cancelled"
                if i == idle_at and await watch.sleep(directives.idle_ms / 1000):
                    return "cancelled"
                if directives.fail_at_chunk is not None and i >= directives.fail_at_chunk:
                    raise SimulatedDrop(f"simulated drop after {i} chunks")
                await send(
                    {"type": "http.response.body", "body": renderer.piece(kind, fragment), "more_body": True}
                )
            if not pieces and ttft and await watch.sleep(ttft):
                return "cancelled"
            await send({"type": "http.response.body", "body": renderer.tail(), "more_body": False})
        except OSError:  # the server tells us the client went away mid-send
            return "cancelled"
        return "completed"


def _query_value(query: bytes, name: bytes) -> str | None:
    """Return the first value of `name` in a query string, decoded; None when absent."""
    values = parse_qs(query.decode("latin-1")).get(name.decode())
    return values[0] if values else None


async def _read_body(receive: Receive) -> bytes | None:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def _send_bytes(
    send: Send,
    status: int,
    body: bytes,
    headers: list[tuple[bytes, bytes]] | None = None,
    content_type: bytes = b"application/json",
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def build_app(
    *, profiles: Mapping[str, SimProfile] | None = None, time_scale: float = 1.0, record_requests: int = 0
) -> SimulatedUpstream:
    """Return the simulated upstream ASGI app; delays are multiplied by `time_scale` (0 = instant).

    With `record_requests` above 0 it keeps the last that many request bodies it received, served at
    GET /debug/requests (`?tag=` for those whose last user turn carries `[sim:tag=...]`); off by default."""
    return SimulatedUpstream(profiles or {}, time_scale, record_requests)
