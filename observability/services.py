"""Writes: request logs and routing decisions, in batches."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.db import IntegrityError, transaction

from .models import RequestLog, RoutingDecision

LOG_FIELDS = {f.name for f in RequestLog._meta.get_fields()} - {"id"}
DECISION_FIELDS = {f.name for f in RoutingDecision._meta.get_fields()} - {"id"}


def _created(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value
    return datetime.fromtimestamp(float(value), tz=UTC)


def records_store(records: list[dict[str, Any]]) -> None:
    """Persist a batch of {"log": {...}, "decision": {...} | None}; idempotent on request_id."""
    logs = []
    decisions = []
    for record in records:
        log = {k: v for k, v in record["log"].items() if k in LOG_FIELDS}
        log["created_at"] = _created(log["created_at"])
        logs.append(RequestLog(**log))
        if record.get("decision"):
            decision = {k: v for k, v in record["decision"].items() if k in DECISION_FIELDS}
            decision["created_at"] = _created(decision["created_at"])
            decisions.append(RoutingDecision(**decision))
    try:
        with transaction.atomic():
            RequestLog.objects.bulk_create(logs)
            RoutingDecision.objects.bulk_create(decisions)
    except IntegrityError:
        # A replayed batch may hold rows already written: fall back to one row at a time.
        for log in logs:
            RequestLog.objects.get_or_create(request_id=log.request_id, defaults=_fields(log))
        for decision in decisions:
            RoutingDecision.objects.get_or_create(request_id=decision.request_id, defaults=_fields(decision))


def _fields(instance: RequestLog | RoutingDecision) -> dict[str, Any]:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields if f.name != "id"}
