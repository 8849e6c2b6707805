"""GET /metrics: Prometheus text, the writer's counters (every process's, in multiprocess mode) plus
what is read at scrape time: the evidence's age, the log spool's size, breakers and cooldowns."""

from __future__ import annotations

import asyncio
import glob
import os
import time
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector

from inferbase.gateway.state import state_of
from routing.snapshot import EVIDENCE_REFRESHED_KEY, Snapshot


class ScrapeTime:
    """Gauges read when scraped, from this process's view (shared through Redis in production)."""

    def __init__(self, snapshot: Snapshot, resting: dict[str, float], refreshed_at: float | None,
                 spool_bytes: int) -> None:
        self._snapshot = snapshot
        self._resting = resting
        self._refreshed_at = refreshed_at
        self._spool_bytes = spool_bytes

    def collect(self):  # type: ignore[no-untyped-def]
        age = GaugeMetricFamily("inferbase_evidence_age_seconds",
                                "Seconds since the evidence task last aggregated route samples (absent before it ran).")
        if self._refreshed_at is not None:
            age.add_metric([], max(0.0, time.time() - self._refreshed_at))
        yield age
        yield GaugeMetricFamily("inferbase_log_spool_bytes", "Records spooled to disk while the database refused them.",
                                value=self._spool_bytes)
        breaker = GaugeMetricFamily("inferbase_circuit_breaker_open",
                                    "1 while a route rests after repeated failures (its circuit is open).",
                                    labels=["route"])
        cooling = GaugeMetricFamily("inferbase_route_cooldown", "1 while a route cools down fleet-wide.",
                                    labels=["route"])
        for routes in self._snapshot.routes.values():
            for route in routes:
                breaker.add_metric([route.route_id], 1.0 if route.route_id in self._resting else 0.0)
                cooling.add_metric([route.route_id], 1.0 if route.cooldown is not None else 0.0)
        yield breaker
        yield cooling


def spool_bytes(directory: Path) -> int:
    """Return the bytes of records waiting in the spool directory."""
    if not directory.is_dir():
        return 0
    return sum(path.stat().st_size for path in directory.iterdir() if path.is_file())


class FilesCollector(MultiProcessCollector):
    """Every process's metrics files, leaving out one that another process is creating this instant.

    prometheus_client creates a process's file and sizes it afterwards, so a scrape can find it at 0 bytes, and
    its collector then raises (struct.error) and the whole scrape fails (prometheus/client_python#1199). A file
    shorter than its 8-byte header holds no value yet; the next scrape reads it."""

    def collect(self):  # type: ignore[no-untyped-def]
        return self.merge([path for path in glob.glob(os.path.join(self._path, "*.db")) if _has_header(path)],
                          accumulate=True)


def _has_header(path: str) -> bool:
    try:
        return os.stat(path).st_size >= 8
    except FileNotFoundError:  # a dead process's live gauges, removed since the glob
        return False


def _exposition(live: CollectorRegistry) -> bytes:
    if settings.PROMETHEUS_MULTIPROC_DIR:
        registry = CollectorRegistry()
        FilesCollector(registry, path=settings.PROMETHEUS_MULTIPROC_DIR)
    else:
        registry = REGISTRY
    return generate_latest(registry) + generate_latest(live)


@require_GET
async def metrics_view(request: HttpRequest) -> HttpResponse:
    """GET /metrics: Prometheus text format (no auth: put it behind your network's scrape access)."""
    state = state_of(request)
    snapshot = await state.snapshot_holder.get()
    await state.route_health.refresh()
    refreshed_at = await cache.aget(EVIDENCE_REFRESHED_KEY)
    spooled = await asyncio.to_thread(spool_bytes, Path(settings.INFERBASE_SPOOL_DIR))
    live = CollectorRegistry()
    live.register(ScrapeTime(snapshot, state.route_health.resting(), refreshed_at, spooled))  # type: ignore[arg-type]
    body = await asyncio.to_thread(_exposition, live)
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
