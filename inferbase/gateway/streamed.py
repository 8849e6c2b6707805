"""A streamed answer: each attempt's chunks relayed as they come, and the stream's Inferbase events.

Nothing is sent until the first chunk is at hand or the keepalive interval passes; a chain that fails before
then is answered with its HTTP status, as when not streamed. After that a failure is an error event.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from providers.errors import UpstreamError
from routing.decision import ChainLink

from .assemble import TRUNCATED_HINT, ChunkAssembler
from .attempt import Attempt
from .chain import BrokeOff, broke_off_error, served
from .choices import streams_merge
from .errors import ApiError, ChainFailed
from .events import NO_DELTA_CHOICES, SSE_DONE, SSE_KEEPALIVE, error_event, sse
from .exchange import Exchange, outcome_ended
from .guard import StreamChecks
from .record import decision_share

if TYPE_CHECKING:
    from .state import AppState

Emit = Callable[[bytes], None]  # hands SSE bytes to the response writer; never blocks


class StreamOut:
    """The stream's way out. Holds the routing event until the first bytes go (the first chunk, or a
    keepalive), so a chain that fails before then can still be answered with an HTTP error status;
    sends `: processing` when nothing has been sent for `interval` seconds. One timer per stream that
    re-arms itself while data flows, so a fast stream pays no task and no timer per chunk."""

    def __init__(self, emit: Emit, interval: float, opening: bytes) -> None:
        self._emit = emit
        self._interval = interval
        self._opening = opening
        self._loop = loop = asyncio.get_running_loop()
        # The loop's clock, read on every emit: asyncio's own loops read time.monotonic, called here directly.
        self._clock = time.monotonic if type(loop).time is asyncio.BaseEventLoop.time else loop.time
        self._last = loop.time()
        self._handle: asyncio.TimerHandle | None = None

    @property
    def started(self) -> bool:
        """Whether anything (the routing event first) has gone to the client."""
        return not self._opening

    def emit(self, data: bytes) -> None:
        self._last = self._clock()
        if self._opening:
            self._emit(self._opening)
            self._opening = b""
        self._emit(data)

    def __enter__(self) -> StreamOut:
        self._handle = self._loop.call_at(self._last + self._interval, self._fire)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self) -> None:
        now = self._loop.time()
        due = self._last + self._interval
        if now >= due:
            self.emit(SSE_KEEPALIVE)
            due = now + self._interval
        self._handle = self._loop.call_at(due, self._fire)


@dataclass(frozen=True, slots=True)
class StreamRead:
    """One relayed attempt: its chunks put together (None when it ended before any content)."""

    assembler: ChunkAssembler | None
    started: float
    usage: dict[str, Any] | None = None  # what the upstream reported (a cut attempt's too: it was billed)

    @property
    def cut(self) -> bool:
        return self.assembler is None

    @property
    def timings(self) -> dict[str, int] | None:
        # The first-token times go to the route's latency evidence (read by the log writer, off this path).
        return self.assembler.first_tokens_ms(self.started) if self.assembler is not None else None


class StreamedAnswer:
    """Relays each attempt's chunks to `out`; the first token counts once content (or a finish, or reasoning
    the client wants) arrives, and from then on the attempt cannot fall back."""

    stream = True
    serves_cut = False

    def __init__(self, state: AppState, ex: Exchange, out: StreamOut) -> None:
        assert ex.chat is not None
        self._state = state
        self._ex = ex
        self._client = state.upstream.client()
        self._out = out
        # With thinking turned off, a model's reasoning is held until its answer starts: an answer that is
        # all reasoning is then a failed attempt, and the client sees none of it.
        self._hold_reasoning = ex.chat.extended_thinking is False
        self._checks = StreamChecks(ex) if ex.guardrails.output else None

    def _source(self, attempt: Attempt) -> AsyncIterator[dict[str, Any]]:
        """Return one attempt's chunks, of n choices: one upstream stream asked for n, or `calls` streams
        interleaved by choice index."""
        adapter, target, body = attempt.adapter, attempt.target, attempt.body
        if attempt.calls > 1:
            return streams_merge([adapter.stream(self._client, target, body, attempt.options)
                                  for _ in range(attempt.calls)])
        return adapter.stream(self._client, target, {**body, "n": attempt.n} if attempt.n > 1 else body,
                              attempt.options)

    async def read(self, attempt: Attempt) -> StreamRead:
        """Relay one attempt; before the first token a failure raises (fallback), after it `BrokeOff`."""
        ex, emit, link = self._ex, self._out.emit, attempt.link
        assembler = ChunkAssembler()
        pending: list[dict[str, Any]] = []
        committed = False
        try:
            async with asyncio.timeout(attempt.budget.attempt_max_s), aclosing(self._source(attempt)) as events:  # type: ignore[type-var]
                async for chunk in events:
                    content, reasoning, finish = assembler.add(chunk)
                    if not chunk.get("choices"):
                        continue  # the upstream's usage chunk: we send our own usage
                    out = _chunk_out(ex, link, chunk)
                    if self._checks is not None and not self._checked(attempt, out):
                        continue  # its content is held back until the checks can settle it
                    if committed:
                        emit(sse(out))
                        continue
                    if finish and not content and self._hold_reasoning and assembler.reasoning:
                        return StreamRead(None, attempt.started, assembler.usage)  # held reasoning only: a failed attempt
                    if content or finish or (reasoning and not self._hold_reasoning):
                        committed = True
                        ex.ttft_ms = ex.elapsed_ms()
                        for held in pending:
                            emit(sse(held))
                        pending.clear()
                        emit(sse(out))
                    else:
                        pending.append(out)
        except (UpstreamError, TimeoutError) as exc:
            if committed:
                raise BrokeOff(exc) from exc
            raise
        # Not committed: it ended with reasoning only (held) or nothing at all.
        return StreamRead(assembler if committed else None, attempt.started, assembler.usage)

    def _checked(self, attempt: Attempt, chunk: dict[str, Any]) -> bool:
        assert self._checks is not None
        try:
            return self._checks.chunk(chunk)
        except ApiError:
            self._ex.attempts.append(attempt.result("guardrail_blocked"))
            raise

    async def amend(self, attempt: Attempt, read: StreamRead) -> StreamRead:  # type: ignore[override]
        return read

    async def serve(self, attempt: Attempt, read: StreamRead) -> None:  # type: ignore[override]
        """Emit OpenAI's usage chunk (when asked for), then the usage event and [DONE].

        The token counts go only in OpenAI's chunk, so code that sums `chunk.usage` counts them once;
        the usage event carries what the request cost and how long it took."""
        ex, emit, link = self._ex, self._out.emit, attempt.link
        assembler = read.assembler
        assert ex.chat is not None and assembler is not None
        if self._checks is not None:
            self._checks.end()
        outcome = served(self._state, ex, link, assembler.usage, "".join(assembler.content), assembler.finish_reason)
        latency_ms = ex.elapsed_ms()
        if ex.chat.include_usage:
            usage = {k: v for k, v in outcome.usage.items() if k != "estimated"}
            usage["cost_micros"] = outcome.cost_micros
            usage["latency_ms"] = latency_ms
            emit(sse({"id": ex.request_id, "object": "chat.completion.chunk", "created": int(ex.created),
                      "model": link.model.id, "choices": [], "usage": usage}))
        event: dict[str, Any] = {
            "id": ex.request_id,
            "object": "usage",
            "created": int(ex.created),
            "model": link.model.id,
            "choices": NO_DELTA_CHOICES,
            "cost_micros": outcome.cost_micros,
            "latency_ms": latency_ms,
            "ttft_ms": ex.ttft_ms,
        }
        if outcome.dropped_params:
            event["dropped_params"] = list(outcome.dropped_params)
        if outcome.finish_reason == "length" and assembler.reasoning:
            event["truncated"] = "max_tokens"
            event["truncated_hint"] = TRUNCATED_HINT
        emit(sse(event))
        await decision_share(self._state, ex)
        emit(SSE_DONE)

    async def fail(self, error: ChainFailed) -> None:
        """Raise `error` while nothing has been sent; after that, end the stream with an error event."""
        if not self._out.started:
            raise error
        self._ex.outcome = outcome_ended(error=error, status_code=200)
        await self._end_with(error)

    async def broke_off(self, attempt: Attempt, outcome: str) -> None:
        error = broke_off_error(outcome)
        self._ex.outcome = outcome_ended(error=error, status_code=200, error_code=outcome, link=attempt.link)
        await self._end_with(error)

    async def _end_with(self, error: ChainFailed) -> None:
        # The decision is shared first, so that it is readable once the client has [DONE].
        self._out.emit(error_event(error))
        await decision_share(self._state, self._ex)
        self._out.emit(SSE_DONE)


def _chunk_out(ex: Exchange, link: ChainLink, chunk: dict[str, Any]) -> dict[str, Any]:
    """Relabel an upstream chunk as ours, in place (it was parsed for us): our id, the catalog model."""
    chunk["id"] = ex.request_id
    chunk["object"] = "chat.completion.chunk"
    chunk["created"] = int(ex.created)
    chunk["model"] = link.model.id
    chunk.pop("system_fingerprint", None)
    chunk.pop("usage", None)
    for choice in chunk["choices"]:
        choice.setdefault("finish_reason", None)
        delta = choice.get("delta")
        if delta and "reasoning" in delta and "reasoning_content" not in delta:
            delta["reasoning_content"] = delta.pop("reasoning")
    return chunk
