"""Reads: routing decisions and request logs, always within one organization."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db.models import QuerySet

from .filters import RequestLogFilter
from .keyset import Cursor, newest_first
from .models import RequestLog, RoutingDecision

DECISION_FIELDS = (
    "request_id", "routing_mode", "classifier_task_family", "complexity_band", "eligibility_pool_size",
    "final_disposition", "decisiveness", "forced_single", "chain_attempted", "route_displays", "filter_trail",
    "filter_trail_text", "attempts", "routing",
)
# What a row of Logs shows (and the live tail renders from a fresh record).
LOG_LIST_FIELDS = (
    "id", "request_id", "created_at", "project_id", "api_key_id", "model_requested", "model_served", "task",
    "complexity", "thinking", "final_disposition", "status_code", "error_code", "stream", "prompt_tokens",
    "cached_tokens", "completion_tokens", "reasoning_tokens", "cost_micros", "latency_ms", "ttft_ms",
)
LOG_EXPORT_FIELDS = (*LOG_LIST_FIELDS, "route_served", "finish_reason", "dropped_params", "client_disconnected")
LOG_DETAIL_FIELDS = (*LOG_LIST_FIELDS, "route_served", "finish_reason", "attempts", "dropped_params",
                     "client_disconnected", "structured_output_repair", "requested")


def decision_shown(values: Mapping[str, Any]) -> dict[str, Any]:
    """Return a decision as the API shows it, from its row's values or from the record the row is written from."""
    out = {name: values.get(name) for name in DECISION_FIELDS}
    created = values["created_at"]
    if not isinstance(created, datetime):
        created = datetime.fromtimestamp(float(created), tz=UTC)
    out["created_at"] = created.isoformat()
    return out


def decision_get(*, request_id: str, organization_ids: list[int]) -> dict[str, Any] | None:
    """Return the decision as the API shows it, or None when missing or another organization's."""
    row = (RoutingDecision.objects.filter(request_id=request_id, organization_id__in=organization_ids)
           .values(*DECISION_FIELDS, "created_at").first())
    return decision_shown(row) if row is not None else None


def _logs_of(organization_id: int) -> QuerySet[RequestLog]:
    # A None would match the logs of requests no key vouched for (organization_id IS NULL): refuse it.
    if not isinstance(organization_id, int) or isinstance(organization_id, bool):
        raise TypeError(f"organization_id must be an organization's id, got {organization_id!r}")
    return RequestLog.objects.filter(organization_id=organization_id)


@dataclass(frozen=True, slots=True)
class LogPage:
    rows: list[dict[str, Any]]
    next_cursor: Cursor | None  # None on the last page


def request_log_list(*, organization_id: int, filters: RequestLogFilter, cursor: Cursor | None = None,
                     limit: int = 50) -> LogPage:
    """Return one page of the organization's logs matching the filters, newest first, after the cursor."""
    queryset = newest_first(filters.apply(_logs_of(organization_id)), cursor)
    rows = list(queryset.values(*LOG_LIST_FIELDS)[: limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    last = rows[-1] if more else None
    return LogPage(rows, Cursor(last["created_at"], last["id"]) if last else None)


def request_log_export(*, organization_id: int, filters: RequestLogFilter,
                       batch_size: int = 2000) -> Iterator[dict[str, Any]]:
    """Yield every log of the organization matching the filters, newest first, read in keyset batches of
    `batch_size` rows, never all in memory.

    Each batch is its own short query, so nothing is held open between two: `.iterator()`'s server-side cursor
    is declared WITH HOLD outside a transaction, and PostgreSQL then computes the whole result before the first
    row (1.9 s at p95 on a million rows); inside a transaction, the connection would be shared with whatever
    other sync views run on the ASGI thread between two chunks."""
    queryset = filters.apply(_logs_of(organization_id))
    cursor: Cursor | None = None
    while True:
        batch = list(newest_first(queryset, cursor).values(*LOG_EXPORT_FIELDS)[:batch_size])
        yield from batch
        if len(batch) < batch_size:
            return
        cursor = Cursor(batch[-1]["created_at"], batch[-1]["id"])


@dataclass(frozen=True, slots=True)
class LogRecord:
    log: dict[str, Any]
    decision: dict[str, Any] | None  # None when the request never reached routing


def request_log_get(*, organization_id: int, request_id: str) -> LogRecord | None:
    """Return the request's log and routing decision, or None when missing or another organization's."""
    log = _logs_of(organization_id).filter(request_id=request_id).values(*LOG_DETAIL_FIELDS).first()
    if log is None:
        return None
    decision = (RoutingDecision.objects.filter(request_id=request_id, organization_id=organization_id)
                .values(*DECISION_FIELDS).first())
    return LogRecord(log, decision)
