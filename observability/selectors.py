"""Reads: routing decisions and logs."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from .models import RoutingDecision

DECISION_FIELDS = (
    "request_id", "routing_mode", "classifier_task_family", "complexity_band", "eligibility_pool_size",
    "final_disposition", "decisiveness", "forced_single", "chain_attempted", "route_displays", "filter_trail",
    "filter_trail_text", "attempts", "routing",
)


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
