"""Factories for routing tests: small in-memory catalogs, never the shipped catalog data."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from providers.credentials import env_credential
from routing.decision import Classification, Decision, RoutingOverrides, RoutingRequest
from routing.engine import decide
from routing.snapshot import ModelSnap, PolicySnap, RouteLatencySnap, RouteSnap, Snapshot


def make_model(**overrides: Any) -> ModelSnap:
    """Build a ModelSnap with plain defaults: a tool-capable, non-thinking base model."""
    model_id = overrides.pop("id", "model-a")
    values: dict[str, Any] = {
        "id": model_id,
        "base_id": model_id.split(":", 1)[0],
        "variant_label": model_id.split(":", 1)[1] if ":" in model_id else None,
        "name": model_id.replace("-", " ").title(),
        "supports_tools": True,
        "verified_structured_output": True,
        "supports_vision": False,
        "reasoning": "none",
        "typical_reasoning_tokens": 0,
        "slow_tier": False,
        "benchmarks": {},
    }
    values.update(overrides)
    return ModelSnap(**values)


def make_latency(ttft_ms_p50: int = 500, tokens_per_second: float = 100.0) -> RouteLatencySnap:
    """Build a route latency sample."""
    return RouteLatencySnap(ttft_ms_p50=ttft_ms_p50, tokens_per_second=tokens_per_second, samples=50)


def make_route(**overrides: Any) -> RouteSnap:
    """Build a RouteSnap on a real provider whose credential is in the environment."""
    model_id = overrides.pop("model_id", "model-a")
    provider = overrides.pop("provider", "groq")
    values: dict[str, Any] = {
        "route_id": f"{provider}/{model_id}",
        "model_id": model_id,
        "provider": provider,
        "provider_kind": "openai-compatible",
        "dialect": "openai",
        "base_url": f"https://{provider}.example/v1",
        "upstream_model": model_id,
        "api_key_env": "",
        "price_input": 1.0,
        "price_output": 2.0,
        "price_cached_input": None,
        "context_window": 128_000,
        "max_output_tokens": 8_192,
        "prompt_caching": "none",
        "data_regions": ("us",),
        "latency": make_latency(),
        "env_credential": True,
        "thinking_switch": "reasoning_effort",  # a route that can switch a hybrid model's thinking off
    }
    values.update(overrides)
    # The integer prices billing charges follow the float ones unless a test sets them.
    values.setdefault("input_micros_per_mtok", round(values["price_input"] * 1_000_000))
    values.setdefault("output_micros_per_mtok", round(values["price_output"] * 1_000_000))
    cached = values["price_cached_input"]
    values.setdefault("cached_input_micros_per_mtok", None if cached is None else round(cached * 1_000_000))
    # As snapshot_build does: the environment's credential is read when the route is built.
    values.setdefault("env_api_key", env_credential(values["api_key_env"]))
    return RouteSnap(**values)


def make_snapshot(models: list[ModelSnap], routes: list[RouteSnap], *,
                  provider_keys: dict[int, dict[str, str]] | None = None,
                  simulated_enabled: bool = True) -> Snapshot:
    """Build a Snapshot from model and route lists."""
    by_model: dict[str, list[RouteSnap]] = {}
    for route in routes:
        by_model.setdefault(route.model_id, []).append(route)
    return Snapshot(
        version="test",
        models={model.id: model for model in models},
        routes={key: tuple(value) for key, value in by_model.items()},
        policies={},
        project_policy={},
        organization_policy={},
        provider_keys=dict(provider_keys or {}),
        simulated_enabled=simulated_enabled,
    )


def make_policy(**overrides: Any) -> PolicySnap:
    """Build a PolicySnap; the defaults are the Inferbase default policy's."""
    values: dict[str, Any] = {"id": None, "name": "Inferbase default", "source": "inferbase"}
    values.update(overrides)
    return PolicySnap(**values)


def make_request(**overrides: Any) -> RoutingRequest:
    """Build an auto, non-streamed RoutingRequest with a short prompt."""
    routing = overrides.pop("routing", None)
    values: dict[str, Any] = {"model": "auto", "prompt_tokens": 100, "max_tokens": None, "stream": False}
    values.update(overrides)
    if routing is not None:
        values["overrides"] = RoutingOverrides(**routing)
    return RoutingRequest(**values)


def make_classification(task: str | None = "chat", complexity: str | None = "standard",
                        **overrides: Any) -> Classification:
    """Build a Classification."""
    return Classification(task=task, complexity=complexity, **overrides)


def with_benchmarks(model: ModelSnap, **scores: float) -> ModelSnap:
    """Return the model with these benchmark scores."""
    return replace(model, benchmarks=dict(scores))


def make_catalog(scores: dict[str, float | None], task: str = "chat", **route_overrides: Any) -> Snapshot:
    """Build a snapshot with one model per id (scored on task; None: no benchmarks) and one route each."""
    models = [make_model(id=model_id, benchmarks={} if score is None else {task: score})
              for model_id, score in scores.items()]
    return make_snapshot(models, [make_route(model_id=model.id, **route_overrides) for model in models])


def decide_with(snapshot: Snapshot, request: RoutingRequest | None = None,
                classification: Classification | None = None, policy: PolicySnap | None = None) -> Decision:
    """Run decide with default request, classification and policy where not given."""
    return decide(request or make_request(), classification or make_classification(), policy or make_policy(),
                  snapshot)


def step(decision_or_error: object, name: str) -> dict:
    """Return the trail record of one step."""
    records = decision_or_error.filter_trail  # type: ignore[attr-defined]
    return next(record for record in records if record["step"] == name)


def step_text(decision_or_error: object, name: str) -> str:
    """Return the trail sentence of one step."""
    records = decision_or_error.filter_trail  # type: ignore[attr-defined]
    index = next(i for i, record in enumerate(records) if record["step"] == name)
    return decision_or_error.filter_trail_text[index]  # type: ignore[attr-defined]


def chain_ids(decision: object) -> list[str]:
    """Return the route ids of the chain, in order."""
    return [link.route.route_id for link in decision.chain]  # type: ignore[attr-defined]


REST_UNTIL = datetime(2026, 10, 12, 14, 3, 7, tzinfo=UTC).timestamp()
