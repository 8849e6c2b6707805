"""ASGI entry point: the application's state, built once, and Channels' routing: chat completions on the
Channels consumer, the simulated upstream at /simulated (embedded default), everything else on Django
(DRF API, admin, portal); the lifespan (uvicorn) or Twisted's triggers (daphne) start and stop the log writer."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inferbase.settings")

from django.core.asgi import get_asgi_application  # noqa: E402

django_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402
from django.urls import re_path  # noqa: E402

from inferbase.api.consumer import ChatCompletionsConsumer  # noqa: E402
from inferbase.gateway.state import AppState, StateMiddleware  # noqa: E402
from inferbase.portal.live import websocket_application  # noqa: E402
from inferbase.scheduler import scheduler_ensure  # noqa: E402
from observability.metrics import metrics_process_exit  # noqa: E402
from providers.lifespan import lifespan_serve  # noqa: E402

# Chat completions, under both base paths, as URLRouter matches a path: without its leading "/".
CHAT_PATH = re.compile(r"^api/v1/(?:inference/)?chat/completions/?$")
SIMULATED_PREFIX = "/simulated"
GC_YOUNG_THRESHOLD = 5000  # allocations between young collections (Python's default: 700)


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
    if not settings.INFERBASE_GC_TUNING:
        return
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, 20, 100)


def _warm() -> None:
    """Load the tokenizer and the classifier weights now, not on the first request."""
    from routing.classifier import classify
    from routing.tokens import count_text_tokens

    count_text_tokens("warm up")
    classify(system="", user="warm up", has_tools=False)


class SimulatedMount:
    """The simulated upstream under /simulated: the ASGI app sees its own paths, the prefix in root_path."""

    def __init__(self, app: Any, prefix: str) -> None:
        self.app = app
        self.prefix = prefix

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        inner = dict(scope)
        inner["path"] = scope["path"][len(self.prefix):] or "/"
        inner["root_path"] = scope.get("root_path", "") + self.prefix
        await self.app(inner, receive, send)


class Lifespan:
    """Under servers that speak the ASGI lifespan (uvicorn): start the log writer (and the embedded scheduler),
    and drain the writer at shutdown."""

    def __init__(self, state: AppState) -> None:
        self.state = state

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        async def startup() -> None:
            _start(self.state)

        await lifespan_serve(receive, send, startup=startup, shutdown=lambda: _stop(self.state))


def _start(state: AppState) -> None:
    """Start what runs beside the requests: the log writer (which replays its spool at once) and, on the
    embedded default, the periodic tasks (inferbase/scheduler.py)."""
    state.recorder.start()
    scheduler_ensure()


async def _stop(state: AppState) -> None:
    """Write (or spool) the queued records, close the upstream clients, and drop this process's live gauges from
    Prometheus' multiprocess directory (after the last write, which sets the queue depth)."""
    try:
        await state.recorder.shutdown(settings.INFERBASE_SHUTDOWN_WRITE_SECONDS)
        await state.upstream.aclose()
    finally:
        metrics_process_exit(settings.PROMETHEUS_MULTIPROC_DIR)


_warm()
state = AppState.from_settings()  # the process's state: snapshot, key cache, shared caches, log writer, clients
_gc_tune()
simulated_app = _simulated_app() if settings.INFERBASE_SIMULATED_MOUNT else None
websocket_app = websocket_application()  # the portal's live tail (/portal/ws/logs/)

application = StateMiddleware(ProtocolTypeRouter({
    "http": URLRouter([
        re_path(CHAT_PATH.pattern, ChatCompletionsConsumer.as_asgi()),
        *([re_path(rf"^{SIMULATED_PREFIX[1:]}(?:/|$)", SimulatedMount(simulated_app, SIMULATED_PREFIX))]
          if simulated_app is not None else []),
        re_path(r"", django_app),  # the DRF API, the admin, the portal
    ]),
    "websocket": websocket_app,  # the portal's live tail
    "lifespan": Lifespan(state),
}), state)

# daphne cancels the requests still running when it stops; give them this long to hand over their records.
CANCELLED_REQUESTS_GRACE_S = 2.0


async def _shutdown_after_cancelled_requests() -> None:
    """Let the requests daphne has just cancelled record themselves, then write (or spool) the queue."""
    current = asyncio.current_task()
    running = [t for t in asyncio.all_tasks() if t is not current and t.get_name() != "inferbase-recorder"]
    if running:
        await asyncio.wait(running, timeout=CANCELLED_REQUESTS_GRACE_S)
    await _stop(state)


def _hook_twisted_shutdown() -> None:
    """Under daphne (Twisted: no ASGI lifespan), start the log writer when the reactor runs and drain it
    before the reactor stops, on SIGTERM and SIGINT alike (Twisted turns both into a reactor stop).

    Registered at import, before daphne adds its own trigger that cancels the running requests: both run
    in the same "before" phase, and the reactor waits for the Deferreds of that phase before it stops."""
    reactor = sys.modules.get("twisted.internet.reactor")
    if reactor is None:
        return  # not under daphne
    from twisted.internet import defer

    reactor.callLater(0, _start, state)  # runs once the reactor's asyncio loop does
    reactor.addSystemEventTrigger(
        "before", "shutdown", lambda: defer.Deferred.fromFuture(asyncio.ensure_future(_shutdown_after_cancelled_requests())))


_hook_twisted_shutdown()
