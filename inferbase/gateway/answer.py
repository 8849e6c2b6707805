"""Answer a routed request: walk its chain for a whole answer (JSON) or a stream of events."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings

from .chain import walk
from .events import routing_event, sse
from .exchange import Exchange
from .streamed import Emit, StreamedAnswer, StreamOut
from .whole import WholeAnswer

if TYPE_CHECKING:
    from .state import AppState


async def answer_whole(state: AppState, ex: Exchange) -> dict[str, Any]:
    """Walk the chain for a non-streamed request; return the chat.completion or raise ApiError."""
    return await walk(state, ex, WholeAnswer(state, ex))


async def answer_stream(state: AppState, ex: Exchange, emit: Emit) -> None:
    """Walk the chain for a streamed request, emitting SSE: routing, chunks, usage, [DONE].

    A chain that fails before anything was sent raises ApiError, as when not streamed; after that a
    failure is the stream's last event."""
    with StreamOut(emit, settings.INFERBASE_STREAM_KEEPALIVE_SECONDS, sse(routing_event(ex))) as out:
        await walk(state, ex, StreamedAnswer(state, ex, out))
