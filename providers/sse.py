"""Server-sent events parsing shared by the adapters."""

from __future__ import annotations

from collections.abc import AsyncIterator


async def iter_sse(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str | None, str]]:
    """Yield (event, data) per dispatched event from decoded lines (line endings stripped).

    Follows the SSE rules: `event:` names the event, `data:` lines join with "\\n", lines starting
    with ':' are comments, a blank line dispatches; an event with no data is not dispatched, and an
    unterminated event at the end of the stream is dropped (the stream was cut)."""
    event: str | None = None
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = None, []
            continue
        if line[0] == ":":
            continue
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value or None


class SSEDecoder:
    """Incremental SSE parsing of a raw body, as bytes: `feed` takes what one network read delivered
    and returns the events it completed, as (event, data). The rules are `iter_sse`'s. Synchronous,
    so that the hot path pays one async step per network read, not one per event."""

    __slots__ = ("_buffer", "_cr")

    def __init__(self) -> None:
        self._buffer = b""
        self._cr = False  # the last read ended with "\r": it may be the first half of "\r\n"

    def feed(self, chunk: bytes) -> list[tuple[bytes | None, bytes]]:
        if self._cr:
            chunk = b"\r" + chunk
            self._cr = False
        if chunk[-1:] == b"\r":
            chunk = chunk[:-1]
            self._cr = True
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        blocks = (self._buffer + chunk if self._buffer else chunk).split(b"\n\n")
        self._buffer = blocks.pop()  # what follows the last blank line: an event not yet complete
        events: list[tuple[bytes | None, bytes]] = []
        for block in blocks:
            if block[:6] == b"data: " and b"\n" not in block:
                events.append((None, block[6:]))  # the common case: one data line
                continue
            event: bytes | None = None
            data: list[bytes] = []
            for line in block.split(b"\n"):
                if not line or line[:1] == b":":
                    continue
                name, sep, value = line.partition(b":")
                if sep and value[:1] == b" ":
                    value = value[1:]
                if name == b"data":
                    data.append(value)
                elif name == b"event":
                    event = value or None
            if data:
                events.append((event, b"\n".join(data)))
        return events


async def iter_sse_bytes(chunks: AsyncIterator[bytes]) -> AsyncIterator[tuple[bytes | None, bytes]]:
    """Yield (event, data) per dispatched event straight from the raw body, as bytes (`SSEDecoder`
    over an async iterator); an unterminated event at the end of the stream is dropped."""
    decoder = SSEDecoder()
    async for chunk in chunks:
        for item in decoder.feed(chunk):
            yield item
