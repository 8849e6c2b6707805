"""Reads: routing decisions and logs."""

from __future__ import annotations

from typing import Any

from .models import RoutingDecision

DECISION_FIELDS = (
    "request_id", "routing_mode", "classifier_task_family", "complexity_band", "eligibility_pool_size",
    "final_disposition", "decisiveness", "forced_single", "chain_attempted", "route_displays", "filter_trail",
    "filter_trail_text", "attempts", "routing",
)


def decision_get(*, request_id: str, organization_ids: list[int]) -> dict[str, Any] | None:
    """Return the decision as the API shows it, or None when missing or another organization's."""
    row = RoutingDecision.objects.filter(request_id=request_id, organization_id__in=organization_ids).first()
    if row is None:
        return None
    out = {name: getattr(row, name) for name in DECISION_FIELDS}
    out["created_at"] = row.created_at.isoformat()
    return out
