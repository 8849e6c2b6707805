"""Reads: routing decisions and request logs, always within one organization."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db.models import QuerySet

from routing.replay import ReplayRow

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
                     "client_disconnected", "structured_output_repair", "requested", "guardrails", "cost_breakdown")


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


def request_logs_stored(*, organization_id: int, request_ids: list[str]) -> set[str]:
    """Return which of the organization's request ids have their log row (one query on the unique index)."""
    if not request_ids:
        return set()
    return set(_logs_of(organization_id).filter(request_id__in=request_ids).values_list("request_id", flat=True))


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


REPLAY_LOG_FIELDS = ("request_id", "model_requested", "task", "complexity", "prompt_tokens", "stream", "requested",
                     "project_id", "cost_micros", "final_disposition")


def replay_rows(*, organization_id: int, limit: int, since: datetime | None = None,
                until: datetime | None = None) -> list[ReplayRow]:
    """Return the organization's latest `limit` logged requests that reached routing (within since..until when
    given), newest first, as the dry-run of a policy replays them: the stored classification, token counts and
    routing asks, and the pick routing made then with its estimates."""
    logs = _logs_of(organization_id).exclude(model_requested="")
    if since is not None:
        logs = logs.filter(created_at__gte=since)
    if until is not None:
        logs = logs.filter(created_at__lt=until)
    rows = list(logs.order_by("-created_at", "-id").values(*REPLAY_LOG_FIELDS)[:limit])
    picks = {request_id: routing for request_id, routing in RoutingDecision.objects.filter(
        organization_id=organization_id, request_id__in=[r["request_id"] for r in rows]).values_list(
        "request_id", "routing")}
    out = []
    for row in rows:
        routing = picks.get(row["request_id"]) or {}
        pick = routing.get("model")
        if pick is None and row["final_disposition"] != "not_routed":
            continue  # stopped before routing (a budget, a rate limit): nothing to compare
        estimate = next((a.get("expected_cost_micros") for a in routing.get("alternatives") or ()
                         if a.get("model") == pick), None)
        out.append(ReplayRow(
            request_id=row["request_id"], model_requested=row["model_requested"], task=row["task"],
            complexity=row["complexity"], prompt_tokens=row["prompt_tokens"], stream=row["stream"],
            requested=row["requested"] or {}, project_id=row["project_id"], then_model=pick,
            then_cost_micros=estimate if estimate is not None else (row["cost_micros"] if pick else None),
            then_wait_ms=routing.get("expected_wait_ms")))
    return out
