"""Celery tasks that refresh routing's evidence; each loads nothing itself and calls one service."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from celery import shared_task

from .services import route_evidence_refresh as _route_evidence_refresh


@shared_task(name="routing.tasks.route_evidence_refresh")
def route_evidence_refresh() -> dict[str, Any]:
    """Aggregate recent route samples into per-route evidence and cooldowns; bump the snapshot on change."""
    return asdict(_route_evidence_refresh())
