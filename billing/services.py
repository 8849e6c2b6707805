"""Writes for billing: the usage rollups, added to by the log writer in the same transaction as the logs."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime
from typing import Any

from django.db import connection

from .models import Budget, RateLimit, UsageRollup

COUNTED = ("requests", "prompt_tokens", "completion_tokens", "reasoning_tokens", "cost_micros")
GROUP = ("organization_id", "day", "project_id", "api_key_id", "model")


def usage_day(created_at: Any) -> date:
    """Return the UTC day of a log record's created_at (epoch seconds, a datetime, or ISO text after a replay)."""
    if isinstance(created_at, datetime):
        moment = created_at
    elif isinstance(created_at, int | float):
        moment = datetime.fromtimestamp(created_at, tz=UTC)
    else:
        moment = datetime.fromisoformat(str(created_at))
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.date()


def usage_deltas(logs: Iterable[dict[str, Any]]) -> dict[tuple[Any, ...], list[int]]:
    """Return the rollup increments of a batch of log records, summed per (organization, day, project, key, model).

    Records without an organization (refused before a key was known) are not usage."""
    deltas: dict[tuple[Any, ...], list[int]] = {}
    for log in logs:
        organization_id = log.get("organization_id")
        if organization_id is None:
            continue
        key = (organization_id, usage_day(log["created_at"]), log.get("project_id") or 0, log.get("api_key_id") or 0,
               (log.get("model_served") or log.get("model_requested") or "")[:160])
        row = deltas.setdefault(key, [0, 0, 0, 0, 0])
        row[0] += 1
        row[1] += int(log.get("prompt_tokens") or 0)
        row[2] += int(log.get("completion_tokens") or 0)
        row[3] += int(log.get("reasoning_tokens") or 0)
        row[4] += int(log.get("cost_micros") or 0)
    return deltas


def usage_rollup_add(logs: Iterable[dict[str, Any]]) -> None:
    """Add a batch of newly stored log records to the rollups: one upsert (INSERT … ON CONFLICT DO UPDATE, on
    SQLite and PostgreSQL) per row touched, in key order so that concurrent writers never deadlock.

    Call it in the transaction that stores the logs, with only the logs stored now, so each counts once."""
    deltas = usage_deltas(logs)
    if not deltas:
        return
    table = connection.ops.quote_name(UsageRollup._meta.db_table)
    columns = ", ".join((*GROUP, *COUNTED))
    placeholders = ", ".join(["%s"] * (len(GROUP) + len(COUNTED)))
    updates = ", ".join(f"{c} = {table}.{c} + excluded.{c}" for c in COUNTED)
    sql = (f"INSERT INTO {table} ({columns}) VALUES ({placeholders}) "
           f"ON CONFLICT ({', '.join(GROUP)}) DO UPDATE SET {updates}")
    adapt = connection.ops.adapt_datefield_value
    rows = [(org, adapt(day), project, key, model, *counts)
            for (org, day, project, key, model), counts in sorted(deltas.items(), key=lambda item: item[0])]
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def scope_settings_save(*, scope: str, scope_id: int, monthly_micros: int | None, alert_percent: int,
                        requests_per_minute: int | None, tokens_per_minute: int | None) -> None:
    """Set one scope's monthly budget and rate limits; None removes a budget, and both limits None remove the
    rate-limit row. Saved and deleted through the models, so their signals bump the snapshot version."""
    # Not in one transaction: each write commits before its signal bumps the version, so a process that
    # reloads on the bump reads the new row, never the old one.
    if monthly_micros is None:
        for budget in Budget.objects.filter(scope=scope, scope_id=scope_id):
            budget.delete()
    else:
        Budget.objects.update_or_create(scope=scope, scope_id=scope_id, defaults={
            "monthly_micros": monthly_micros, "alert_percent": alert_percent})
    if requests_per_minute is None and tokens_per_minute is None:
        for limit in RateLimit.objects.filter(scope=scope, scope_id=scope_id):
            limit.delete()
    else:
        RateLimit.objects.update_or_create(scope=scope, scope_id=scope_id, defaults={
            "requests_per_minute": requests_per_minute, "tokens_per_minute": tokens_per_minute})
