"""ASGI entry point: chat completions on the Channels consumer, the simulated upstream at /simulated
(embedded default), and everything else on Django (DRF API, admin, portal)."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inferbase.settings")

from django.core.asgi import get_asgi_application  # noqa: E402

django_app = get_asgi_application()

from django.conf import settings  # noqa: E402

from inferbase.api.consumer import ChatCompletionsConsumer  # noqa: E402
from inferbase.portal.live import websocket_application  # noqa: E402
from inferbase.scheduler import scheduler_ensure  # noqa: E402
from providers.http import close_shared_client  # noqa: E402

CHAT_PATH = re.compile(r"^/api/v1/(?:inference/)?chat/completions/?$")
SIMULATED_PREFIX = "/simulated"


def _simulated_app() -> Any:
    from providers.simulated import build_app, load_profiles

    return build_app(profiles=load_profiles(settings.INFERBASE_CATALOG_PATH),
                     time_scale=settings.INFERBASE_SIMULATED_TIME_SCALE)


def _gc_tune() -> None:
    """Keep the garbage collector off what start-up loaded, and collect the young less often.

    Measured on the gateway under load (docs/benchmarks.md): with the default thresholds the collector
    spent 0.35–0.5 ms per request, mostly in full and middle collections that walked the ~130,000
    objects start-up leaves behind (Django, the libraries, the tokenizer and classifier), none of which
    ever become garbage. `gc.freeze()` moves them out of its sight; the larger first threshold makes
    young collections rarer (a pause of about 10 ms every few hundred requests instead of one of about
    1 ms every few requests). `INFERBASE_GC_TUNING=false` leaves the defaults."""
    if os.environ.get("INFERBASE_GC_TUNING", "true").lower() in ("0", "false", "no"):
        return
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(5000, 20, 100)


def _warm() -> None:
    """Load the tokenizer and the classifier weights now, not on the first request."""
    from routing.classifier import classify
    from routing.tokens import count_text_tokens

    count_text_tokens("warm up")
    classify(system="", user="warm up", has_tools=False)


_warm()
_gc_tune()
chat_app = ChatCompletionsConsumer.as_asgi()
simulated_app = _simulated_app() if settings.INFERBASE_SIMULATED_MOUNT else None
websocket_app = websocket_application()  # the portal's live tail (/portal/ws/logs/)


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    scheduler_ensure()  # the periodic tasks run in this process on the embedded default (inferbase/scheduler.py)
    if scope["type"] == "http":
        path = scope["path"]
        if CHAT_PATH.match(path):
            return await chat_app(scope, receive, send)
        if simulated_app is not None and (path == SIMULATED_PREFIX or path.startswith(SIMULATED_PREFIX + "/")):
            inner = dict(scope)
            inner["path"] = path[len(SIMULATED_PREFIX):] or "/"
            inner["root_path"] = scope.get("root_path", "") + SIMULATED_PREFIX
            return await simulated_app(inner, receive, send)
    if scope["type"] == "websocket":
        return await websocket_app(scope, receive, send)
    if scope["type"] == "lifespan":
        return await _lifespan(receive, send)
    return await django_app(scope, receive, send)


async def _lifespan(receive: Any, send: Any) -> None:
    """Under servers that speak the ASGI lifespan (uvicorn): start the log writer, and drain it at shutdown."""
    from observability.recorder import recorder

    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            recorder().start()
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            try:
                await recorder().shutdown(settings.INFERBASE_SHUTDOWN_WRITE_SECONDS)
                await close_shared_client()
            finally:
                await send({"type": "lifespan.shutdown.complete"})
            return


# daphne cancels the requests still running when it stops; give them this long to hand over their records.
CANCELLED_REQUESTS_GRACE_S = 2.0


async def _shutdown_after_cancelled_requests() -> None:
    """Let the requests daphne has just cancelled record themselves, then write (or spool) the queue."""
    from observability.recorder import recorder

    current = asyncio.current_task()
    running = [t for t in asyncio.all_tasks() if t is not current and t.get_name() != "inferbase-recorder"]
    if running:
        await asyncio.wait(running, timeout=CANCELLED_REQUESTS_GRACE_S)
    await recorder().shutdown(settings.INFERBASE_SHUTDOWN_WRITE_SECONDS)
    await close_shared_client()


def _hook_twisted_shutdown() -> None:
    """Under daphne (Twisted: no ASGI lifespan), start the log writer when the reactor runs and drain it
    before the reactor stops, on SIGTERM and SIGINT alike (Twisted turns both into a reactor stop).

    Registered at import, before daphne adds its own trigger that cancels the running requests: both run
    in the same "before" phase, and the reactor waits for the Deferreds of that phase before it stops."""
    reactor = sys.modules.get("twisted.internet.reactor")
    if reactor is None:
        return  # not under daphne
    from twisted.internet import defer

    from observability.recorder import recorder

    reactor.callLater(0, lambda: recorder().start())  # runs once the reactor's asyncio loop does
    reactor.addSystemEventTrigger(
        "before", "shutdown", lambda: defer.Deferred.fromFuture(asyncio.ensure_future(_shutdown_after_cancelled_requests())))


_hook_twisted_shutdown()
