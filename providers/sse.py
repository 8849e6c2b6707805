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


async def iter_sse_bytes(chunks: AsyncIterator[bytes]) -> AsyncIterator[tuple[bytes | None, bytes]]:
    """Yield (event, data) per dispatched event straight from the raw body, as bytes.

    The same rules as `iter_sse`, without decoding the body into text lines first: on the hot path
    every layer of async iteration and decoding is paid once per token chunk."""
    buffer = b""
    async for chunk in chunks:
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        buffer = buffer + chunk if buffer else chunk
        while True:
            end = buffer.find(b"\n\n")
            if end < 0:
                break
            block, buffer = buffer[:end], buffer[end + 2 :]
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
                yield event, b"\n".join(data)
