"""Routing policies as plain values: the fields a version records, their diff, and the PolicySnap they make."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .snapshot import PolicySnap

# Every field of RoutingPolicy the engine reads (and the name): what a version records and restores.
POLICY_FIELDS: tuple[str, ...] = (
    "name", "pool", "allow_variants", "objective", "quality_floor", "quality_floor_by_task",
    "require_pinned_in_pool", "allowed_providers", "data_regions", "first_token_timeout_ms", "total_deadline_ms",
    "chain_length", "max_cost_micros", "structured_output_extraction", "structured_output_reask",
    "explore_unmeasured", "admit_unmeasured", "guardrails",
)

# A version recorded before a field was versioned lacks it: it is read as the field's empty value (guardrails were
# edited in the Django admin only then, outside versions).
_UNRECORDED: dict[str, Any] = {"guardrails": {}}


@dataclass(frozen=True, slots=True)
class FieldChange:
    field: str
    before: Any
    after: Any


def policy_fields(row: Any) -> dict[str, Any]:
    """Return a policy row's recorded fields as JSON-ready values (lists sorted, so order is no change)."""
    return {name: _normal(name, getattr(row, name)) for name in POLICY_FIELDS}


def _normal(name: str, value: Any) -> Any:
    if name in ("pool", "allowed_providers", "data_regions"):
        return sorted(value or ())
    if name == "quality_floor_by_task":
        return dict(sorted((value or {}).items()))
    if name == "guardrails":
        return value or {}
    return value


def _recorded(fields: dict[str, Any], name: str) -> Any:
    return fields.get(name, _UNRECORDED.get(name))


def version_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """Return a version's recorded fields, those it predates at their empty value (what restoring it sets)."""
    return {**_UNRECORDED, **fields}


def policy_diff(before: dict[str, Any] | None, after: dict[str, Any]) -> list[FieldChange]:
    """Return the fields that differ between two recorded states, in POLICY_FIELDS order (all of them from None;
    a field a version predates reads as its empty value)."""
    if before is None:
        return [FieldChange(name, None, after.get(name)) for name in POLICY_FIELDS if after.get(name) is not None]
    return [FieldChange(name, _recorded(before, name), _recorded(after, name)) for name in POLICY_FIELDS
            if _recorded(before, name) != _recorded(after, name)]


def policy_snap_from_fields(fields: dict[str, Any], *, policy_id: int | None = None,
                            source: str = "key") -> PolicySnap:
    """Return the PolicySnap the engine would read for these recorded (or edited, unsaved) fields."""
    return PolicySnap(
        id=policy_id,
        name=str(fields.get("name") or ""),
        source=source,
        pool=tuple(fields.get("pool") or ()),
        allow_variants=bool(fields.get("allow_variants", True)),
        objective=fields.get("objective") or "balanced",
        quality_floor=fields.get("quality_floor") or "standard",
        quality_floor_by_task=dict(fields.get("quality_floor_by_task") or {}),
        require_pinned_in_pool=bool(fields.get("require_pinned_in_pool", False)),
        allowed_providers=tuple(fields.get("allowed_providers") or ()),
        data_regions=tuple(fields.get("data_regions") or ()),
        first_token_timeout_ms=int(fields.get("first_token_timeout_ms") or 15_000),
        total_deadline_ms=int(fields.get("total_deadline_ms") or 60_000),
        chain_length=max(1, int(fields.get("chain_length") or 4)),
        max_cost_micros=fields.get("max_cost_micros"),
        structured_output_extraction=bool(fields.get("structured_output_extraction", True)),
        structured_output_reask=bool(fields.get("structured_output_reask", False)),
        explore_unmeasured=bool(fields.get("explore_unmeasured", False)),
        admit_unmeasured=bool(fields.get("admit_unmeasured", False)),
        guardrails=dict(fields.get("guardrails") or {}),
    )
