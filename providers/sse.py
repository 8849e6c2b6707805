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
