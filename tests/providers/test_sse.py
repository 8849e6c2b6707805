from __future__ import annotations

from collections.abc import AsyncIterator

from providers.sse import iter_sse_bytes


async def _chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def test_events_split_across_reads_are_joined() -> None:
    events = [e async for e in iter_sse_bytes(_chunks(b'data: {"a"', b': 1}\n', b"\ndata: [DONE]\n\n"))]
    assert events == [(None, b'{"a": 1}'), (None, b"[DONE]")]


async def test_named_events_multiline_data_comments_and_crlf() -> None:
    body = b": ping\r\n\r\nevent: message_start\r\ndata: 1\r\ndata: 2\r\n\r\nevent: x\n\n"
    assert [e async for e in iter_sse_bytes(_chunks(body))] == [(b"message_start", b"1\n2")]


async def test_an_unterminated_event_at_the_end_is_dropped() -> None:
    assert [e async for e in iter_sse_bytes(_chunks(b"data: 1\n\ndata: cut"))] == [(None, b"1")]
