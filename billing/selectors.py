"""Reads for billing: the configured limits as one frozen value, and usage from the rollups."""

from __future__ import annotations

from .limits import LimitsSnapshot, Scope, ScopeLimits
from .models import Budget, RateLimit


def limits_snapshot_load() -> LimitsSnapshot:
    """Return every configured budget and rate limit, keyed by scope (two queries; load it with the snapshot)."""
    scopes: dict[tuple[Scope, int], dict[str, object]] = {}
    for scope, scope_id, micros, alert in Budget.objects.values_list("scope", "scope_id", "monthly_micros", "alert_percent"):
        scopes.setdefault((Scope(scope), scope_id), {}).update(monthly_budget_micros=micros, alert_percent=alert)
    for scope, scope_id, rpm, tpm in RateLimit.objects.values_list("scope", "scope_id", "requests_per_minute",
                                                                   "tokens_per_minute"):
        scopes.setdefault((Scope(scope), scope_id), {}).update(requests_per_minute=rpm, tokens_per_minute=tpm)
    return LimitsSnapshot({key: ScopeLimits(key[0], key[1], **fields) for key, fields in scopes.items()})  # type: ignore[arg-type]
