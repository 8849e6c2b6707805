from __future__ import annotations

from collections.abc import AsyncIterator

from providers.sse import SSEDecoder, iter_sse_bytes


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


async def test_a_crlf_split_across_two_reads_is_one_line_end() -> None:
    events = [e async for e in iter_sse_bytes(_chunks(b"data: 1\r", b"\ndata: 2\r\n\r", b"\n"))]
    assert events == [(None, b"1\n2")]


def test_the_decoder_returns_every_event_one_read_completes() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b'data: {"a": 1}\n\ndata:  spaced\n\nevent: e\ndata: x\n\ndata: par') == [
        (None, b'{"a": 1}'), (None, b" spaced"), (b"e", b"x")]
    assert decoder.feed(b"t\n\n") == [(None, b"part")]
