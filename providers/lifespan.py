"""The ASGI lifespan protocol, answered in one place for the ASGI apps here (the gateway, the simulated upstream,
the benchmark's floor)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Hook = Callable[[], Awaitable[None]]


async def lifespan_serve(receive: Any, send: Any, *, startup: Hook | None = None, shutdown: Hook | None = None) -> None:
    """Run `startup` before reporting the app started and `shutdown` before reporting it stopped (reported even
    when `shutdown` raises, so that the server exits)."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            if startup is not None:
                await startup()
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            try:
                if shutdown is not None:
                    await shutdown()
            finally:
                await send({"type": "lifespan.shutdown.complete"})
            return
