"""Reads for billing: the configured limits as one frozen value, and usage from the rollups."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from django.db.models import Sum

from .limits import LimitsSnapshot, Scope, ScopeLimits
from .models import Budget, RateLimit, UsageRollup
from .services import usage_deltas


def limits_snapshot_load() -> LimitsSnapshot:
    """Return every configured budget and rate limit, keyed by scope (two queries; load it with the snapshot)."""
    scopes: dict[tuple[Scope, int], dict[str, object]] = {}
    for scope, scope_id, micros, alert in Budget.objects.values_list("scope", "scope_id", "monthly_micros", "alert_percent"):
        scopes.setdefault((Scope(scope), scope_id), {}).update(monthly_budget_micros=micros, alert_percent=alert)
    for scope, scope_id, rpm, tpm in RateLimit.objects.values_list("scope", "scope_id", "requests_per_minute",
                                                                   "tokens_per_minute"):
        scopes.setdefault((Scope(scope), scope_id), {}).update(requests_per_minute=rpm, tokens_per_minute=tpm)
    return LimitsSnapshot({key: ScopeLimits(key[0], key[1], **fields) for key, fields in scopes.items()})  # type: ignore[arg-type]


USAGE_GROUPS = {"day": "day", "model": "model", "project": "project_id", "key": "api_key_id"}
USAGE_COUNTS = ("requests", "prompt_tokens", "completion_tokens", "reasoning_tokens", "cost_micros")


@dataclass(frozen=True, slots=True)
class UsageReport:
    """GET /usage's answer for one organization: totals and one row per group, in integers."""

    organization_id: int
    start: date
    end: date
    group_by: str
    totals: dict[str, int]
    data: tuple[dict[str, Any], ...]

    def as_dict(self) -> dict[str, Any]:
        return {"object": "usage", "from": self.start.isoformat(), "to": self.end.isoformat(),
                "totals": dict(self.totals), "data": [dict(row) for row in self.data]}


def _group_value(group_by: str, value: Any) -> Any:
    if group_by == "day":
        return value.isoformat()
    if group_by in ("project", "key"):
        return value or None  # 0 is the rollups' "none"
    return value


def _order(value: Any) -> tuple[bool, Any]:
    """Sort groups as the rollup query does: "none" (no project, no key) first, then by value."""
    return (value is not None, value if value is not None else 0)


def usage_report(*, organization_id: int, start: date, end: date, group_by: str = "day") -> UsageReport:
    """Return the organization's usage from start to end (inclusive days, UTC) grouped by day, model, project
    or key; one indexed query over the rollups. Raises ValueError for an unknown group."""
    field = USAGE_GROUPS.get(group_by)
    if field is None:
        raise ValueError(f"group_by must be one of {', '.join(USAGE_GROUPS)}")
    rows = (UsageRollup.objects.filter(organization_id=organization_id, day__gte=start, day__lte=end)
            .values(field).annotate(**{name: Sum(name) for name in USAGE_COUNTS}).order_by(field))
    data = tuple({field: _group_value(group_by, row[field]), **{name: int(row[name] or 0) for name in USAGE_COUNTS}}
                 for row in rows)
    totals = {name: sum(row[name] for row in data) for name in USAGE_COUNTS}
    return UsageReport(organization_id, start, end, group_by, totals, data)


def usage_pending_merge(report: UsageReport, logs: list[dict[str, Any]]) -> UsageReport:
    """Return the report with log records not yet stored by the log writer added in (read-your-writes: the
    pipeline keeps a request's record pending in the shared cache from its answer until the writer commits)."""
    field = USAGE_GROUPS[report.group_by]
    rows = {row[field]: dict(row) for row in report.data}
    for (organization_id, day, project_id, key_id, model), counts in usage_deltas(logs).items():
        if organization_id != report.organization_id or not report.start <= day <= report.end:
            continue
        value = {"day": day, "model": model, "project": project_id, "key": key_id}[report.group_by]
        group = _group_value(report.group_by, value)
        row = rows.setdefault(group, {field: group, **dict.fromkeys(USAGE_COUNTS, 0)})
        for name, count in zip(USAGE_COUNTS, counts, strict=True):
            row[name] += count
    data = tuple(sorted(rows.values(), key=lambda row: _order(row[field])))
    totals = {name: sum(row[name] for row in data) for name in USAGE_COUNTS}
    return UsageReport(report.organization_id, report.start, report.end, report.group_by, totals, data)


@dataclass(frozen=True, slots=True)
class ScopeSettings:
    """What is configured for one scope: its budget (None: none) and its limits (None: no limit of that kind)."""

    monthly_micros: int | None = None
    alert_percent: int = 80
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None


def scope_settings_get(*, scopes: list[tuple[str, int]]) -> dict[tuple[str, int], ScopeSettings]:
    """Return the budget and rate limits of each (scope, scope_id) asked for; unset scopes get the defaults
    (two queries)."""
    wanted = {(scope, scope_id) for scope, scope_id in scopes}
    budgets: dict[tuple[str, int], tuple[int, int]] = {}
    limits: dict[tuple[str, int], tuple[int | None, int | None]] = {}
    ids = {scope_id for _, scope_id in wanted}
    for scope, scope_id, micros, alert in (Budget.objects.filter(scope_id__in=ids)
                                           .values_list("scope", "scope_id", "monthly_micros", "alert_percent")):
        if (scope, scope_id) in wanted:
            budgets[(scope, scope_id)] = (micros, alert)
    for scope, scope_id, rpm, tpm in (RateLimit.objects.filter(scope_id__in=ids)
                                      .values_list("scope", "scope_id", "requests_per_minute", "tokens_per_minute")):
        if (scope, scope_id) in wanted:
            limits[(scope, scope_id)] = (rpm, tpm)
    out = {}
    for key in scopes:
        micros, alert = budgets.get(key, (None, 80))
        rpm, tpm = limits.get(key, (None, None))
        out[key] = ScopeSettings(micros, alert, rpm, tpm)
    return out
