"""A model's evidence, as GET /models/{id} shows it: per route its latency (traffic's or the catalog's prior),
failures and cooldown; its benchmark scores with their sources."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from routing.selectors import model_enabled_routes, model_evidence, model_get

from .access import portal_view


def _percent(rate: float | None) -> str:
    return "" if rate is None else f"{100 * rate:.1f}%"


def _moment(iso: str | None) -> datetime | None:
    return datetime.fromisoformat(iso) if iso else None


def evidence_page(evidence: dict[str, Any]) -> dict[str, Any]:
    """Return the evidence block with rates as percentages and times as datetimes, for the template."""
    routes = [{**route, "error_rate": _percent(route["failures"]["error_rate"]),
               "timeout_rate": _percent(route["failures"]["timeout_rate"]),
               "truncation_rate": _percent(route["failures"].get("truncation_rate")),
               "updated_at": _moment(route["latency"]["updated_at"]),
               "cooldown_until": _moment(route["cooldown_until"])} for route in evidence["routes"]]
    benchmarks = [{"task": task, **score} for task, score in sorted(evidence["benchmarks"].items())]
    return {"routes": routes, "benchmarks": benchmarks}


@portal_view()
@require_safe
def model_view(request: HttpRequest, model_id: str) -> HttpResponse:
    """GET /portal/models/<model_id>/: the model's evidence; an unknown id is a 404."""
    model = model_get(model_id=model_id)
    if model is None:
        return render(request, "portal/not_found.html", {"what": f"No model {model_id} in the catalog."}, status=404)
    evidence = model_evidence(model_id=model_id, routes=model_enabled_routes(model_id=model_id))
    return render(request, "portal/models/detail.html", {"model": model, "evidence": evidence_page(evidence)})
