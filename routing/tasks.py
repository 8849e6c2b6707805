"""Celery tasks that refresh routing's evidence; each loads nothing itself and calls one service."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from celery import shared_task

from .services import benchmark_feeds_refresh as _benchmark_feeds_refresh
from .services import route_evidence_refresh as _route_evidence_refresh


@shared_task(name="routing.tasks.route_evidence_refresh")
def route_evidence_refresh() -> dict[str, Any]:
    """Aggregate recent route samples into per-route evidence and cooldowns; bump the snapshot on change."""
    return asdict(_route_evidence_refresh())


@shared_task(name="routing.tasks.benchmark_feeds_refresh")
def benchmark_feeds_refresh() -> list[dict[str, Any]]:
    """Load the configured benchmark feeds, each checked whole; return what each load recorded."""
    return [{"feed": load.feed, "version": load.version, "applied": load.applied, "errors": load.errors[:10]}
            for load in _benchmark_feeds_refresh()]
