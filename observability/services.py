"""Writes: request logs and routing decisions, in batches."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache, cached_property
from typing import Any

import orjson
from django.conf import settings
from django.db import IntegrityError, connection, models, transaction

from .models import RequestLog, RoutingDecision


def _created(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value
    return datetime.fromtimestamp(float(value), tz=UTC)


@dataclass(frozen=True)
class _Column:
    attname: str
    default: Any
    adapt: Callable[[Any], Any] | None


@dataclass(frozen=True)
class _Insert:
    sql: str
    columns: tuple[_Column, ...]

    def row(self, values: dict[str, Any]) -> list[Any]:
        """The parameters of one row: every column's value (or its default), then the adapted ones adapted."""
        get = values.get
        out = [get(attname, default) for attname, default in self.pairs]
        for index, adapt in self.adapted:
            value = out[index]
            if value is not None:
                out[index] = adapt(value)
        return out

    @cached_property
    def pairs(self) -> tuple[tuple[str, Any], ...]:
        return tuple((column.attname, column.default) for column in self.columns)

    @cached_property
    def adapted(self) -> tuple[tuple[int, Callable[[Any], Any]], ...]:
        return tuple((i, column.adapt) for i, column in enumerate(self.columns) if column.adapt is not None)


def _json_text(value: Any) -> str:
    return orjson.dumps(value).decode()


@cache
def _insert_for(model: type[models.Model], vendor: str) -> _Insert:
    """The INSERT statement and, per column, how a record's value becomes a parameter. Built once per
    model: the ORM's per-instance, per-field work cost more than the write itself."""
    fields = [f for f in model._meta.concrete_fields if f.name != "id"]
    placeholders = ", ".join("%s::jsonb" if vendor == "postgresql" and isinstance(f, models.JSONField) else "%s"
                             for f in fields)
    quote = connection.ops.quote_name
    sql = (f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) "
           f"VALUES ({placeholders})")
    columns = []
    for f in fields:
        default = f.get_default() if f.has_default() else None
        adapt: Callable[[Any], Any] | None = None
        if isinstance(f, models.JSONField):
            adapt = _json_text
        elif isinstance(f, models.DateTimeField):
            adapt = _datetime_adapter()
        columns.append(_Column(f.attname, default, adapt))
    return _Insert(sql, tuple(columns))


def _datetime_adapter() -> Callable[[Any], Any]:
    ops = connection.ops
    if connection.vendor == "sqlite" and settings.USE_TZ and connection.timezone_name == "UTC":
        # What the SQLite backend makes of an aware datetime in UTC (make_naive, then str), without its checks
        # and conversions for the seconds since the epoch every record carries.
        def adapt(value: Any) -> Any:
            if isinstance(value, datetime):
                return ops.adapt_datetimefield_value(value)
            return str(datetime.fromtimestamp(float(value), tz=UTC).replace(tzinfo=None))

        return adapt
    return lambda value: ops.adapt_datetimefield_value(_created(value))


def records_store(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Persist a batch of {"log": {...}, "decision": {...} | None}; idempotent on request_id. Keys a
    record has that the tables do not are ignored; a column a record lacks takes its default. Return the
    logs stored by this call (a replayed log already stored is not), for what must count each log once."""
    logs = [record["log"] for record in records]
    decisions = [record["decision"] for record in records if record.get("decision")]
    try:
        with transaction.atomic():
            _insert_many(RequestLog, logs)
            _insert_many(RoutingDecision, decisions)
        return logs
    except IntegrityError:
        # A replayed batch may hold rows already written: fall back to one row at a time.
        stored: list[dict[str, Any]] = []
        for model, rows in ((RequestLog, logs), (RoutingDecision, decisions)):
            known = {column.attname for column in _insert_for(model, connection.vendor).columns}
            for row in rows:
                fields = {k: v for k, v in row.items() if k in known}
                fields["created_at"] = _created(fields["created_at"])
                _, created = model.objects.get_or_create(request_id=fields.pop("request_id"), defaults=fields)
                if created and model is RequestLog:
                    stored.append(row)
        return stored


def _insert_many(model: type[models.Model], rows: list[dict[str, Any]]) -> None:
    """INSERT the rows in one executemany; JSON columns are serialised with orjson."""
    if not rows:
        return
    insert = _insert_for(model, connection.vendor)
    with connection.cursor() as cursor:
        cursor.executemany(insert.sql, [insert.row(row) for row in rows])
