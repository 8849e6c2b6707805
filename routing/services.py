"""Writes for routing: load the shipped catalog and evidence files, add a provider."""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.db import transaction

from providers.base import NO_THINKING_SWITCH
from providers.models import Provider

from .models import BenchmarkScore, Model, Route, RouteLatency
from .snapshot import snapshot_version_bump

SIMULATED = "simulated"
SIMULATED_ANTHROPIC = "simulated-anthropic"


@dataclass(frozen=True)
class CatalogLoadResult:
    version: str
    providers: int
    models: int
    routes: int


def _kind(raw: str) -> str:
    return {"openai": "openai-compatible"}.get(raw, raw)


def _price(value: Any) -> Decimal | None:
    return None if value is None else Decimal(str(value))


@transaction.atomic
def catalog_load(*, catalog_path: Path, evidence_path: Path | None = None) -> CatalogLoadResult:
    """Upsert providers, models, routes (plus one simulated route per model) and evidence; idempotent."""
    catalog = json.loads(catalog_path.read_text())
    providers: dict[str, Provider] = {}
    for p in catalog["providers"]:
        providers[p["slug"]], _ = Provider.objects.update_or_create(
            slug=p["slug"],
            defaults={
                "name": p["name"], "kind": _kind(p["kind"]), "dialect": p.get("dialect", "openai"),
                "base_url": p.get("base_url") or "", "api_key_env": p.get("api_key_env") or "",
                "prompt_caching": p.get("prompt_caching", "none"), "data_regions": p.get("data_regions", []),
                "from_catalog": True,
            },
        )
    for slug, dialect, name in ((SIMULATED, "openai", "Simulated upstream (OpenAI wire)"),
                                (SIMULATED_ANTHROPIC, "anthropic", "Simulated upstream (Anthropic wire)")):
        if slug not in providers:
            providers[slug], _ = Provider.objects.update_or_create(
                slug=slug, defaults={"name": name, "kind": "simulated", "dialect": dialect, "from_catalog": True,
                                     "data_regions": ["local"]})
    route_count = 0
    models: dict[str, Model] = {}
    for m in catalog["models"]:
        caps = m.get("capabilities", {})
        model, _ = Model.objects.update_or_create(
            catalog_id=m["id"],
            defaults={
                "base_id": m.get("base_id") or m["id"], "variant_label": m.get("variant_label") or "",
                "name": m["name"], "author": m.get("author", ""), "supports_tools": bool(caps.get("tools")),
                "verified_structured_output": bool(caps.get("structured_output")),
                "supports_vision": bool(caps.get("vision")), "reasoning": m.get("reasoning", "none"),
                "typical_reasoning_tokens": int(m.get("typical_reasoning_tokens") or 0),
                "slow_tier": bool(m.get("slow_tier")), "simulation": m.get("simulation", {}), "from_catalog": True,
            },
        )
        models[m["id"]] = model
        real_routes = m.get("routes", [])
        for r in real_routes:
            _route_upsert(model, providers[r["provider"]], r)
            route_count += 1
        if real_routes:
            cheapest = min(real_routes, key=lambda r: (r["price_input"] + r["price_output"], r["provider"]))
            widest = max(real_routes, key=lambda r: (r["context_window"], r["max_output_tokens"]))
            simulated_provider = providers[SIMULATED_ANTHROPIC if providers[cheapest["provider"]].dialect == "anthropic" else SIMULATED]
            _route_upsert(model, simulated_provider, {
                **cheapest, "upstream_model": m["id"], "context_window": widest["context_window"],
                "max_output_tokens": widest["max_output_tokens"],
            })
            route_count += 1
    if evidence_path is not None and evidence_path.exists():
        _evidence_load(json.loads(evidence_path.read_text()), models, providers)
    snapshot_version_bump()
    return CatalogLoadResult(catalog.get("version", ""), len(providers), len(models), route_count)


def _route_upsert(model: Model, provider: Provider, r: dict[str, Any]) -> Route:
    route, _ = Route.objects.update_or_create(
        model=model, provider=provider,
        defaults={
            "upstream_model": r["upstream_model"], "price_input": _price(r["price_input"]),
            "price_output": _price(r["price_output"]), "price_cached_input": _price(r.get("price_cached_input")),
            "context_window": int(r["context_window"]), "max_output_tokens": int(r["max_output_tokens"]),
            "thinking_switch": r.get("thinking_switch") or NO_THINKING_SWITCH, "from_catalog": True,
        },
    )
    return route


def _evidence_load(evidence: dict[str, Any], models: dict[str, Model], providers: dict[str, Provider]) -> None:
    for model_id, scores in evidence.get("benchmarks", {}).items():
        model = models.get(model_id)
        if model is None:
            continue
        source = scores.get("source", "")
        for task, score in scores.items():
            if task == "source" or not isinstance(score, int | float):
                continue
            BenchmarkScore.objects.update_or_create(model=model, task=task, defaults={"score": float(score), "source": source})
    for route_key, lat in evidence.get("route_latency", {}).items():
        provider_slug, _, model_id = route_key.partition("/")
        route = Route.objects.filter(provider__slug=provider_slug, model__catalog_id=model_id).first()
        if route is None:
            continue
        RouteLatency.objects.update_or_create(route=route, defaults={
            "ttft_ms_p50": int(lat["ttft_ms_p50"]), "ttft_ms_p90": lat.get("ttft_ms_p90"),
            "tokens_per_second": float(lat["tokens_per_second"]), "samples": int(lat.get("samples", 0)),
        })
    # Simulated routes are measured by construction: their behaviour is the catalog's simulation block.
    for model in models.values():
        sim = model.simulation or {}
        for route in Route.objects.filter(model=model, provider__kind="simulated"):
            if sim.get("ttft_ms") and sim.get("tokens_per_second"):
                RouteLatency.objects.update_or_create(route=route, defaults={
                    "ttft_ms_p50": int(sim["ttft_ms"]), "tokens_per_second": float(sim["tokens_per_second"]), "samples": 0})


@transaction.atomic
def provider_add(*, name: str, base_url: str, api_key_env: str = "", models: list[tuple[str, str]],
                 price_input: float = 0.0, price_output: float = 0.0, context_window: int = 32768,
                 max_output_tokens: int = 4096, tools: bool = False, reasoning: str | None = None,
                 thinking_switch: str | None = None) -> Provider:
    """Add (or update) a user's own OpenAI-compatible endpoint and its models; no code change needed.

    A new model's reasoning is `reasoning` when declared, else unknown (so routing does not claim a
    thinking mode it has not measured); a declared mode also updates a model added earlier this way.
    The routes send a thinking switch only in the dialect `thinking_switch` declares; a new route declares
    none unless told, and a declared switch also updates the routes added earlier."""
    from django.utils.text import slugify

    slug = slugify(name)
    provider, _ = Provider.objects.update_or_create(
        slug=slug, defaults={"name": name, "kind": "openai-compatible", "dialect": "openai",
                             "base_url": base_url.rstrip("/"), "api_key_env": api_key_env})
    for catalog_id, upstream in models:
        model, created = Model.objects.get_or_create(
            catalog_id=catalog_id, defaults={"base_id": catalog_id.split(":")[0], "name": catalog_id,
                                             "supports_tools": tools,
                                             "variant_label": catalog_id.partition(":")[2],
                                             "reasoning": reasoning or Model.Reasoning.UNKNOWN})
        if not created and reasoning is not None and not model.from_catalog and model.reasoning != reasoning:
            model.reasoning = reasoning
            model.save(update_fields=["reasoning"])
        route_fields: dict[str, Any] = {
            "upstream_model": upstream, "price_input": Decimal(str(price_input)),
            "price_output": Decimal(str(price_output)), "context_window": context_window,
            "max_output_tokens": max_output_tokens}
        if thinking_switch is not None:
            route_fields["thinking_switch"] = thinking_switch
        Route.objects.update_or_create(model=model, provider=provider, defaults=route_fields)
    snapshot_version_bump()
    return provider
