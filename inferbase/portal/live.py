"""The live tail of Logs: a WebSocket per viewer (/portal/ws/logs/), in a group of its organization; the log
writer publishes each stored request's row there, rendered once per organization.

Publishing never slows a request: it runs in the log writer's thread after the batch is stored, renders the
rows, and hands the send to the event loop that gave the writer its job (`call_soon_threadsafe`, no wait).
Rows are rendered only for organizations someone is watching: each open tail marks its organization in the
shared cache (Redis, or the file cache of the embedded default, so a viewer on any process counts) for
VIEWER_TTL_S and renews the mark while open; the writer reads the marks with one `get_many` per batch. Rendering
costs 0.3-0.5 ms of CPU a row (`make bench-gateway` measured it on every request before this).
Sends in flight are capped: past the cap a batch's rows are dropped, and the channel layer drops what a slow
socket has not read (its capacity). A viewer who missed rows sees them on a reload."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import defaultdict
from typing import Any

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.security.websocket import AllowedHostsOriginValidator
from django.core.cache import cache
from django.template.loader import render_to_string
from django.urls import path

from inferbase.accounts.selectors import viewer_get
from observability.recorder import writer_job_loop

from .rows import Names, log_row, names_for

logger = logging.getLogger(__name__)

MAX_IN_FLIGHT = 64  # group sends not yet done, per process; past it, rows are dropped
MAX_ROWS_PER_ORGANIZATION = 50  # per batch: the newest; a viewer of a busier stream reloads anyway
NAMES_TTL_S = 5.0  # an organization's names, reused for this long across batches (a new key shows soon)
WS_LOGS_PATH = "portal/ws/logs/"
VIEWER_TTL_S = 60  # an open tail's mark in the shared cache lasts this long...
VIEWER_RENEW_S = 20.0  # ...and is renewed this often while the socket is open

_in_flight = 0  # sends handed to the loop and not done: the writer's thread adds, the loop subtracts
_in_flight_lock = threading.Lock()
_names: dict[int, tuple[float, Names]] = {}
dropped = 0  # rows dropped on backpressure since start (read by tests and logs)


def logs_group(organization_id: int) -> str:
    """Return the channel-layer group of an organization's live tail."""
    return f"portal-logs-{organization_id}"


def viewers_key(organization_id: int) -> str:
    """Return the shared-cache key that says someone watches an organization's live tail."""
    return f"portal-logs-viewers:{organization_id}"


class LogsTailConsumer(AsyncJsonWebsocketConsumer):
    """One viewer's live tail: a logged-in member of an organization joins its group; anyone else is refused."""

    group: str | None = None
    renewing: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        viewer = await database_sync_to_async(viewer_get)(user_id=user.pk)
        if viewer is None:
            await self.close(code=4403)
            return
        self.group = logs_group(viewer.organization_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        # Marked before the socket opens: a request made once the browser sees it open is published.
        await cache.aset(viewers_key(viewer.organization_id), True, VIEWER_TTL_S)
        self.renewing = asyncio.get_running_loop().create_task(self._renew(viewer.organization_id),
                                                               name="inferbase-live-tail-viewer")
        await self.accept()

    async def _renew(self, organization_id: int) -> None:
        while True:
            await asyncio.sleep(VIEWER_RENEW_S)
            try:
                await cache.aset(viewers_key(organization_id), True, VIEWER_TTL_S)
            except Exception:  # the cache is down: rows may stop until it is back, the socket stays
                logger.warning("live tail: renewing a viewer's mark failed", exc_info=True)

    async def disconnect(self, code: int) -> None:
        # The mark is left to expire: another viewer of the organization may be watching.
        if self.renewing is not None:
            self.renewing.cancel()
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def logs_rows(self, event: dict[str, Any]) -> None:
        """Forward a batch of rendered rows (newest first) to the browser."""
        await self.send_json({"rows": event["rows"]})


def websocket_application() -> Any:
    """Return the ASGI app of the portal's WebSockets: the session's user, from an allowed host's page only."""
    return AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter([
        path(WS_LOGS_PATH, LogsTailConsumer.as_asgi()),
    ])))


def _names_of(organization_id: int) -> Names:
    now = time.monotonic()
    cached = _names.get(organization_id)
    if cached is not None and now - cached[0] < NAMES_TTL_S:
        return cached[1]
    names = names_for(organization_id=organization_id)
    _names[organization_id] = (now, names)
    return names


def rendered_rows(logs: list[dict[str, Any]]) -> dict[int, list[str]]:
    """Return each organization's rows of these logs, rendered as Logs shows them, newest first."""
    by_organization: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for log in logs:
        if log.get("organization_id") is not None:
            by_organization[int(log["organization_id"])].append(log)
    out = {}
    for organization_id, org_logs in by_organization.items():
        org_logs.sort(key=lambda log: float(log["created_at"] if not hasattr(log["created_at"], "timestamp")
                                            else log["created_at"].timestamp()), reverse=True)
        names = _names_of(organization_id)
        out[organization_id] = [render_to_string("portal/_partials/log_row.html", {"row": log_row(log, names)})
                                for log in org_logs[:MAX_ROWS_PER_ORGANIZATION]]
    return out


def watched(organization_ids: set[int]) -> set[int]:
    """Return the organizations of these whose live tail someone has open (any process); all of them when the
    shared cache cannot say (rows then go out as if watched, and the failure is logged)."""
    if not organization_ids:
        return set()
    try:
        marks = cache.get_many([viewers_key(org) for org in organization_ids])
    except Exception:
        logger.warning("live tail: reading the viewers' marks failed; publishing", exc_info=True)
        return organization_ids
    return {org for org in organization_ids if viewers_key(org) in marks}


def live_tail_publish(logs: list[dict[str, Any]]) -> None:
    """Publish stored logs' rows to their organizations' live tails, without waiting (call from the log
    writer's thread, after the batch is stored); rows of organizations nobody watches are not rendered. A failure
    here is logged, never raised: the logs are stored."""
    global dropped
    loop = writer_job_loop()
    if not logs or loop is None or get_channel_layer() is None:
        return
    seen = watched({int(log["organization_id"]) for log in logs if log.get("organization_id") is not None})
    logs = [log for log in logs if log.get("organization_id") is not None and int(log["organization_id"]) in seen]
    if not logs:
        return
    try:
        batches = rendered_rows(logs)
    except Exception:
        logger.warning("live tail: rendering %d rows failed", len(logs), exc_info=True)
        return
    global _in_flight
    for organization_id, rows in batches.items():
        with _in_flight_lock:
            if _in_flight >= MAX_IN_FLIGHT:
                dropped += len(rows)
                continue
            _in_flight += 1
        try:
            loop.call_soon_threadsafe(_send_soon, organization_id, rows)
        except RuntimeError:
            _done()
            return  # the loop is closed: the process is stopping


def _send_soon(organization_id: int, rows: list[str]) -> None:
    task = asyncio.get_running_loop().create_task(_send(organization_id, rows), name="inferbase-live-tail")
    task.add_done_callback(_sent)


def _done() -> None:
    global _in_flight
    with _in_flight_lock:
        _in_flight -= 1


async def _send(organization_id: int, rows: list[str]) -> None:
    await get_channel_layer().group_send(logs_group(organization_id), {"type": "logs.rows", "rows": rows})


def _sent(task: asyncio.Task[None]) -> None:
    _done()
    if not task.cancelled() and task.exception() is not None:
        logger.warning("live tail: a send failed: %s", task.exception())
