"""Reads of the catalog for the API and the portal (the request path reads the snapshot instead): a model's
evidence, as `GET /models/{id}` shows it, and model names."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from .models import BenchmarkScore, Model, RouteEvidence, RouteLatency


def _latency(evidence: RouteEvidence | None, prior: RouteLatency | None) -> dict[str, Any]:
    """The route's latency figures: traffic's once it has the minimum of samples, else the catalog's prior."""
    samples = evidence.samples if evidence is not None else 0
    out: dict[str, Any] = {"first_token_ms_p50": None, "first_token_ms_p90": None, "end_to_end_ms_p50": None,
                           "output_tokens_per_s": None, "samples": samples, "source": None,
                           "window": evidence.window if evidence is not None else None,
                           "updated_at": evidence.updated_at.isoformat() if evidence is not None else None}
    if evidence is not None and samples >= settings.INFERBASE_EVIDENCE_MIN_SAMPLES:
        out.update(first_token_ms_p50=evidence.first_token_ms_p50, first_token_ms_p90=evidence.first_token_ms_p90,
                   end_to_end_ms_p50=evidence.end_to_end_ms_p50, output_tokens_per_s=evidence.output_tokens_per_s,
                   source="traffic")
    elif prior is not None:
        out.update(first_token_ms_p50=prior.ttft_ms_p50, first_token_ms_p90=prior.ttft_ms_p90,
                   output_tokens_per_s=prior.tokens_per_second, source="catalog")
    return out


def _benchmarks(model: Model) -> dict[str, dict[str, Any]]:
    rows = list(BenchmarkScore.objects.filter(model=model).order_by("task"))
    if not rows and model.base_id and model.base_id != model.catalog_id:
        rows = list(BenchmarkScore.objects.filter(model__catalog_id=model.base_id).order_by("task"))
    out = {}
    for row in rows:
        entry: dict[str, Any] = {"score": row.score, "source": row.source_title or None, "as_of": row.as_of or None}
        if row.verified:
            entry["url"] = row.source_url
        else:
            entry["unverified"] = True
        out[row.task] = entry
    return out


def model_evidence(*, model_id: str, routes: list[tuple[str, str]]) -> dict[str, Any]:
    """Return a model's evidence block: per route (id, provider) its latency, failures and cooldown, and
    its benchmark scores with their sources."""
    model = Model.objects.filter(catalog_id=model_id).first()
    route_ids = [route_id for route_id, _ in routes]
    evidence = {row.route_id: row for row in RouteEvidence.objects.filter(route_id__in=route_ids)}
    priors = {f"{row.route.provider.slug}/{row.route.model.catalog_id}": row
              for row in RouteLatency.objects.filter(route__model__catalog_id=model_id)
              .select_related("route__provider", "route__model")}
    out_routes = []
    for route_id, provider in routes:
        row = evidence.get(route_id)
        out_routes.append({
            "route": route_id,
            "provider": provider,
            "latency": _latency(row, priors.get(route_id)),
            "failures": {"error_rate": row.error_rate if row else 0.0, "timeout_rate": row.timeout_rate if row else 0.0,
                         "truncation_rate": row.truncation_rate if row else 0.0,
                         "samples": row.failure_samples if row else 0},
            "cooldown_until": row.cooldown_until.isoformat() if row and row.cooldown_until else None,
        })
    return {"routes": out_routes, "benchmarks": _benchmarks(model) if model is not None else {}}


def model_names() -> dict[str, str]:
    """Return every catalog model, catalog id -> its name."""
    return dict(Model.objects.values_list("catalog_id", "name"))
