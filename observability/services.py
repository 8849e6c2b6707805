"""Writes: request logs and routing decisions, in batches."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import orjson
from django.db import IntegrityError, connection, models, transaction

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
            _insert_many(RequestLog, logs)
            _insert_many(RoutingDecision, decisions)
    except IntegrityError:
        # A replayed batch may hold rows already written: fall back to one row at a time.
        for log in logs:
            RequestLog.objects.get_or_create(request_id=log.request_id, defaults=_fields(log))
        for decision in decisions:
            RoutingDecision.objects.get_or_create(request_id=decision.request_id, defaults=_fields(decision))


def _insert_many(model: type[models.Model], rows: list[Any]) -> None:
    """INSERT the rows in one executemany: this runs for every request, and the ORM's per-field
    compilation cost more than the write. JSON columns are serialised with orjson."""
    if not rows:
        return
    fields = [f for f in model._meta.concrete_fields if f.name != "id"]
    vendor = connection.vendor
    placeholders = ", ".join("%s::jsonb" if vendor == "postgresql" and isinstance(f, models.JSONField) else "%s"
                             for f in fields)
    quote = connection.ops.quote_name
    sql = (f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) "
           f"VALUES ({placeholders})")
    values = []
    for row in rows:
        values.append([
            orjson.dumps(getattr(row, f.attname)).decode() if isinstance(f, models.JSONField)
            else f.get_db_prep_save(getattr(row, f.attname), connection)
            for f in fields
        ])
    with connection.cursor() as cursor:
        cursor.executemany(sql, values)


def _fields(instance: RequestLog | RoutingDecision) -> dict[str, Any]:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields if f.name != "id"}
