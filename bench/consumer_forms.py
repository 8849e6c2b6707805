"""What Channels' own `AsyncConsumer.__call__` costs a request, against the chat consumer's `__call__`.

    .venv/bin/python -m bench.consumer_forms [--requests 5000]

Both forms serve the same request in-process (no server, no socket): an ASGI `http.request` with a small
body, a `handle` that answers 200 at once. The chat consumer's form reads the body itself and runs
`handle` beside a task that watches for the client leaving; Channels' form creates a channel on the
configured layer, dispatches each message (closing stale database connections in the ORM's thread first)
and awaits `handle` from its `http_request` handler. CPU is the process's (all threads) per request.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inferbase.settings")


def _forms() -> dict[str, type]:
    from channels.consumer import AsyncConsumer

    from inferbase.api.consumer import ChatCompletionsConsumer

    class OwnCall(ChatCompletionsConsumer):
        """The chat consumer's `__call__`, with a `handle` that answers at once."""

        async def handle(self, body: bytes) -> None:
            await self.send_response(200, b"{}", headers=[(b"content-type", b"application/json")])

    class ChannelsCall(OwnCall):
        """Channels' `AsyncConsumer.__call__` (channel layer, dispatch, `http_request` -> `handle`)."""

        async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
            await AsyncConsumer.__call__(self, scope, receive, send)

    return {"own __call__": OwnCall, "channels __call__": ChannelsCall}


async def _one(app: Any) -> None:
    messages = [{"type": "http.request", "body": b'{"model": "auto"}', "more_body": False}]
    done = asyncio.Event()

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body" and not message.get("more_body"):
            done.set()

    scope = {"type": "http", "method": "POST", "path": "/api/v1/chat/completions", "headers": []}
    await app(scope, receive, send)


async def _measure(app: Any, requests: int, concurrency: int) -> float:
    """Return CPU microseconds per request."""
    for _ in range(200):
        await _one(app)
    cpu0 = time.process_time()
    for _ in range(requests // concurrency):
        await asyncio.gather(*(_one(app) for _ in range(concurrency)))
    return (time.process_time() - cpu0) * 1e6 / (requests // concurrency * concurrency)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.consumer_forms", description=__doc__)
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import django

    django.setup()
    from django.conf import settings

    forms = _forms()
    print(f"channel layer: {settings.CHANNEL_LAYERS['default']['BACKEND']}")
    for concurrency in (1, 50):
        results: dict[str, list[float]] = {name: [] for name in forms}
        for _ in range(args.rounds):  # interleaved, so that the machine's noise falls on both alike
            for name, form in forms.items():
                results[name].append(asyncio.run(_measure(form.as_asgi(), args.requests, concurrency)))
        for name, values in results.items():
            print(f"c={concurrency:<3d} {name:18s} CPU per request: median {statistics.median(values):7.1f} us "
                  f"(min {min(values):.1f}, max {max(values):.1f}; {args.rounds} rounds of {args.requests})")


if __name__ == "__main__":
    main()
