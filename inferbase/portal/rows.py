"""What a row of Logs shows, built from a log's values (a selector's row, or a fresh record for the live tail)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.urls import reverse

from inferbase.accounts.selectors import api_key_labels, project_names
from routing.decision import AUTO_MODEL_NAMES
from routing.selectors import model_names


@dataclass(frozen=True, slots=True)
class Names:
    """The names rows show instead of ids: the organization's projects and keys, the catalog's models."""

    projects: dict[int, str]
    keys: dict[int, str]
    models: dict[str, str]

    def model(self, catalog_id: str) -> str:
        """Return the model's name; `auto` as itself; an id the catalog no longer has, as the id."""
        if not catalog_id:
            return ""
        if catalog_id in AUTO_MODEL_NAMES:
            return "auto"
        return self.models.get(catalog_id, catalog_id)


def model_label(catalog_id: str, names: dict[str, str]) -> str:
    """Return "Name (catalog id)", as the policy editor lists models; the id alone when the catalog has no name."""
    name = names.get(catalog_id, catalog_id)
    return catalog_id if name == catalog_id else f"{name} ({catalog_id})"


def model_labels(catalog_ids: list[str], names: dict[str, str]) -> str:
    """Return a list of models as the pages write it: each `model_label`, comma-separated ("" for none)."""
    return ", ".join(model_label(cid, names) for cid in catalog_ids)


def names_for(*, organization_id: int) -> Names:
    """Return the names an organization's pages show (three queries)."""
    return Names(project_names(organization_id=organization_id), api_key_labels(organization_id=organization_id),
                 model_names())


def dollars(micros: int | None) -> str:
    """Return micro-dollars as dollars to the micro-dollar, without floating point: 1234567 -> "$1.234567"."""
    if micros is None:
        return ""
    sign = "-" if micros < 0 else ""
    whole, fraction = divmod(abs(int(micros)), 1_000_000)
    return f"{sign}${whole:,}.{fraction:06d}"


@dataclass(frozen=True, slots=True)
class LogRow:
    request_id: str
    created_at: datetime
    project: str
    key: str
    model_requested: str
    model_requested_id: str
    model_served: str
    model_served_id: str
    task: str
    complexity: str
    thinking: str
    disposition: str
    status: int
    error_code: str
    stream: bool
    prompt_tokens: int
    cached_tokens: int | None
    completion_tokens: int
    reasoning_tokens: int | None
    cost_micros: int
    cost: str
    latency_ms: int
    ttft_ms: int | None
    # Formatted here, once, rather than by template filters in each of a page's rows.
    url: str
    time_short: str  # "Nov 30, 17:12:40"
    time_full: str  # "2026-11-30 17:12:40.007956"
    time_iso: str

    @property
    def ok(self) -> bool:
        return self.disposition == "served"


def _created(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value
    return datetime.fromtimestamp(float(value), tz=UTC)  # a fresh record carries epoch seconds


def log_detail_url(request_id: str) -> str:
    """Return the detail page's path (reversed once; a page has many rows)."""
    return _detail_prefix() + request_id + "/"


def _detail_prefix() -> str:
    return reverse("portal:log_detail", args=["x"])[:-2]


def log_row(values: Mapping[str, Any], names: Names) -> LogRow:
    """Return the row for a log's values, with names in place of ids."""
    project_id, key_id = values.get("project_id"), values.get("api_key_id")
    created = _created(values["created_at"]).astimezone(UTC)
    return LogRow(
        request_id=values["request_id"],
        created_at=created,
        project=names.projects.get(project_id, "") if project_id is not None else "",
        key=names.keys.get(key_id, "") if key_id is not None else "",
        model_requested=names.model(values.get("model_requested") or ""),
        model_requested_id=values.get("model_requested") or "",
        model_served=names.model(values.get("model_served") or ""),
        model_served_id=values.get("model_served") or "",
        task=values.get("task") or "",
        complexity=values.get("complexity") or "",
        thinking=values.get("thinking") or "",
        disposition=values.get("final_disposition") or "",
        status=int(values.get("status_code") or 0),
        error_code=values.get("error_code") or "",
        stream=bool(values.get("stream")),
        prompt_tokens=int(values.get("prompt_tokens") or 0),
        cached_tokens=values.get("cached_tokens"),
        completion_tokens=int(values.get("completion_tokens") or 0),
        reasoning_tokens=values.get("reasoning_tokens"),
        cost_micros=int(values.get("cost_micros") or 0),
        cost=dollars(values.get("cost_micros") or 0),
        latency_ms=int(values.get("latency_ms") or 0),
        ttft_ms=values.get("ttft_ms"),
        url=log_detail_url(values["request_id"]),
        time_short=created.strftime("%b %-d, %H:%M:%S"),
        time_full=created.strftime("%Y-%m-%d %H:%M:%S.%f"),
        time_iso=created.isoformat(),
    )
