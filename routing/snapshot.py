"""The in-memory snapshot of catalog, evidence and policies that `routing.decide` reads.

Built from the database in one go (sync, off the request path), held per process, and rebuilt
when the shared version key changes: every admin edit and evidence refresh bumps it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.conf import settings
from django.core.cache import cache

from providers.credentials import env_credential
from providers.health import simulated_base_url

VERSION_KEY = "inferbase:snapshot-version"
EVIDENCE_REFRESHED_KEY = "inferbase:evidence-refreshed-at"  # when the evidence task last ran (epoch seconds)


@dataclass(frozen=True, slots=True)
class RouteLatencySnap:
    """What routing expects of a route's latency: measured from traffic, else the catalog's prior."""

    ttft_ms_p50: int | None  # time to first token
    tokens_per_second: float | None
    samples: int = 0
    source: str = "catalog"  # traffic | catalog
    first_answer_token_ms_p50: int | None = None  # traffic only
    end_to_end_ms_p50: int | None = None  # traffic only


@dataclass(frozen=True, slots=True)
class RouteCooldownSnap:
    """A route resting fleet-wide after too many failures: since and until (wall-clock seconds), and why."""

    since: float
    until: float
    reason: str


@dataclass(frozen=True, slots=True)
class RouteSnap:
    """One servable-or-not route. The float prices (micro-dollars per token = USD per million tokens) rank and
    estimate; billing charges the integer ones (micro-dollars per million tokens), converted once when built."""

    route_id: str  # "<provider>/<catalog id>"
    model_id: str
    provider: str
    provider_kind: str  # openai-compatible | anthropic | simulated
    dialect: str  # openai | anthropic
    base_url: str
    upstream_model: str
    api_key_env: str
    price_input: float
    price_output: float
    price_cached_input: float | None
    input_micros_per_mtok: int
    output_micros_per_mtok: int
    cached_input_micros_per_mtok: int | None
    context_window: int
    max_output_tokens: int
    prompt_caching: str  # automatic | explicit | none
    data_regions: tuple[str, ...]
    latency: RouteLatencySnap | None
    env_credential: bool  # True when the route's credential is in the environment (or none is needed)
    thinking_switch: str = "none"  # how an OpenAI-compatible route switches thinking (providers.base.THINKING_SWITCHES)
    cooldown: RouteCooldownSnap | None = None
    provider_down: bool = False  # the provider's API did not answer its latest health probe
    # The credential from the environment (api_key_env), read when the snapshot is built, never per request.
    env_api_key: str | None = field(default=None, repr=False, compare=False)

    @property
    def measured_latency(self) -> bool:
        """True when traffic has measured the route (not only the catalog's prior)."""
        return self.latency is not None and self.latency.source == "traffic"

    @property
    def simulated(self) -> bool:
        return self.provider_kind == "simulated"


@dataclass(frozen=True, slots=True)
class ModelSnap:
    id: str  # catalog id: slug or slug:variant
    base_id: str
    variant_label: str | None
    name: str
    supports_tools: bool
    verified_structured_output: bool
    supports_vision: bool
    reasoning: str  # none | switchable | always_on | unknown (not measured)
    typical_reasoning_tokens: int
    slow_tier: bool
    benchmarks: dict[str, float]  # task -> 0..1, plus "overall"; may be empty
    unverified: frozenset[str] = frozenset()  # tasks whose score has no source: never called measured
    created: int = 0  # the release month's first day, Unix seconds (OpenAI's model.created); 0 when not known


@dataclass(frozen=True, slots=True)
class PolicySnap:
    id: int | None
    name: str
    source: str  # key | project | organization | inferbase
    pool: tuple[str, ...] = ()
    allow_variants: bool = True
    objective: str = "balanced"
    quality_floor: str = "standard"
    quality_floor_by_task: dict[str, str] = field(default_factory=dict)
    require_pinned_in_pool: bool = False
    allowed_providers: tuple[str, ...] = ()
    data_regions: tuple[str, ...] = ()
    first_token_timeout_ms: int = 15_000
    total_deadline_ms: int = 60_000
    chain_length: int = 4
    max_cost_micros: int | None = None
    structured_output_extraction: bool = True
    structured_output_reask: bool = False
    guardrails: dict[str, Any] = field(default_factory=dict)  # the policy's checks as configured (JSON)
    explore_unmeasured: bool = False
    admit_unmeasured: bool = False


INFERBASE_DEFAULT_POLICY = PolicySnap(id=None, name="Inferbase default", source="inferbase")


@dataclass(frozen=True, slots=True)
class Snapshot:
    version: str
    models: dict[str, ModelSnap]
    routes: dict[str, tuple[RouteSnap, ...]]  # catalog id -> routes
    policies: dict[int, PolicySnap]
    project_policy: dict[int, int]  # project id -> policy id
    organization_policy: dict[int, int]  # organization id -> policy id
    provider_keys: dict[int, dict[str, str]]  # project id -> provider slug -> secret
    simulated_enabled: bool
    # Shares of auto traffic: probes of cooling routes (after half the cooldown), and exploration of
    # unmeasured models under a policy that asks for it.
    probe_share: float = 0.0
    explore_share: float = 0.0
    # Results the engine derives from this snapshot alone (per model and project, say): the snapshot is
    # immutable, so they hold for its lifetime. Bounded by the engine.
    memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)

    def policy_for(self, *, key_policy_id: int | None, project_id: int | None, organization_id: int | None) -> PolicySnap:
        """Resolve the policy a key runs under: key, else project default, else organization default, else Inferbase."""
        for policy_id, source in (
            (key_policy_id, "key"),
            (self.project_policy.get(project_id) if project_id is not None else None, "project"),
            (self.organization_policy.get(organization_id) if organization_id is not None else None, "organization"),
        ):
            if policy_id is not None and policy_id in self.policies:
                policy = self.policies[policy_id]
                return policy if policy.source == source else _with_source(policy, source)
        return INFERBASE_DEFAULT_POLICY

    def credential_for(self, route: RouteSnap, project_id: int | None) -> tuple[str | None, bool] | None:
        """Return (secret, own_key) for a route, or None when the route has no credential for this project."""
        if route.simulated:
            return (None, False) if self.simulated_enabled else None
        if project_id is not None:
            own = self.provider_keys.get(project_id, {}).get(route.provider)
            if own:
                return own, True
        if route.env_credential:
            return route.env_api_key, False
        return None


def _with_source(policy: PolicySnap, source: str) -> PolicySnap:
    return replace(policy, source=source)


def policy_snap_from_row(row: Any, source: str = "key") -> PolicySnap:
    return PolicySnap(
        id=row.pk,
        name=row.name,
        source=source,
        pool=tuple(row.pool or ()),
        allow_variants=row.allow_variants,
        objective=row.objective,
        quality_floor=row.quality_floor,
        quality_floor_by_task=dict(row.quality_floor_by_task or {}),
        require_pinned_in_pool=row.require_pinned_in_pool,
        allowed_providers=tuple(row.allowed_providers or ()),
        data_regions=tuple(row.data_regions or ()),
        first_token_timeout_ms=row.first_token_timeout_ms,
        total_deadline_ms=row.total_deadline_ms,
        chain_length=max(1, row.chain_length),
        max_cost_micros=row.max_cost_micros,
        structured_output_extraction=row.structured_output_extraction,
        structured_output_reask=row.structured_output_reask,
        guardrails=row.guardrails or {},
        explore_unmeasured=row.explore_unmeasured,
        admit_unmeasured=row.admit_unmeasured,
    )


def snapshot_build(
    version: str,
    *,
    project_policy: dict[int, int] | None = None,
    organization_policy: dict[int, int] | None = None,
    provider_keys: dict[int, dict[str, str]] | None = None,
) -> Snapshot:
    """Read catalog, evidence and policies from the database (sync); account data is handed in."""
    from providers.models import ProviderHealth

    from .models import BenchmarkScore, Model, Route, RouteEvidence, RoutingPolicy

    benchmarks: dict[int, dict[str, float]] = {}
    unverified: dict[int, set[str]] = {}
    for model_pk, task, score, url in BenchmarkScore.objects.values_list("model_id", "task", "score", "source_url"):
        benchmarks.setdefault(model_pk, {})[task] = float(score)
        if not url:
            unverified.setdefault(model_pk, set()).add(task)
    evidence = {row.route_id: row for row in RouteEvidence.objects.all()}
    down = set(ProviderHealth.objects.filter(status=ProviderHealth.Status.LOADING).values_list("provider_id", flat=True))
    models: dict[str, ModelSnap] = {}
    pk_to_id: dict[int, str] = {}
    for row in Model.objects.filter(enabled=True):
        pk_to_id[row.pk] = row.catalog_id
        models[row.catalog_id] = ModelSnap(
            id=row.catalog_id,
            base_id=row.base_id or row.catalog_id,
            variant_label=row.variant_label or None,
            name=row.name,
            supports_tools=row.supports_tools,
            verified_structured_output=row.verified_structured_output,
            supports_vision=row.supports_vision,
            reasoning=row.reasoning,
            typical_reasoning_tokens=row.typical_reasoning_tokens,
            slow_tier=row.slow_tier,
            benchmarks=benchmarks.get(row.pk, {}),
            unverified=frozenset(unverified.get(row.pk, ())),
            created=_unix_day(row.released),
        )
    for model_id, model in list(models.items()):
        base = models.get(model.base_id)
        if not model.benchmarks and base is not None and base is not model:
            models[model_id] = replace(model, unverified=base.unverified)  # it is ranked on its base's scores
    simulated_enabled = bool(settings.INFERBASE_SIMULATED_ROUTES)
    routes: dict[str, list[RouteSnap]] = {}
    query = Route.objects.filter(enabled=True, provider__enabled=True, model__enabled=True).select_related(
        "provider", "latency"
    )
    for row in query.order_by("pk"):
        model_id = pk_to_id.get(row.model_id)
        if model_id is None:
            continue
        provider = row.provider
        simulated = provider.kind == "simulated"
        if simulated and not simulated_enabled:
            continue
        route_id = f"{provider.slug}/{model_id}"
        measured = evidence.get(route_id)
        latency = route_latency(measured, getattr(row, "latency", None))
        env_api_key = None if simulated else env_credential(provider.api_key_env)
        servable_by_env = simulated or not provider.api_key_env or env_api_key is not None
        routes.setdefault(model_id, []).append(
            RouteSnap(
                route_id=route_id,
                model_id=model_id,
                provider=provider.slug,
                provider_kind=provider.kind,
                dialect=provider.dialect,
                base_url=simulated_base_url(provider.dialect) if simulated else provider.base_url.rstrip("/"),
                upstream_model=row.upstream_model,
                api_key_env="" if simulated else provider.api_key_env,
                price_input=float(row.price_input),
                price_output=float(row.price_output),
                price_cached_input=float(row.price_cached_input) if row.price_cached_input is not None else None,
                input_micros_per_mtok=micros_per_mtok(row.price_input),
                output_micros_per_mtok=micros_per_mtok(row.price_output),
                cached_input_micros_per_mtok=(micros_per_mtok(row.price_cached_input)
                                              if row.price_cached_input is not None else None),
                context_window=row.context_window,
                max_output_tokens=row.max_output_tokens,
                prompt_caching=provider.prompt_caching,
                data_regions=tuple(provider.data_regions or ()),
                latency=latency,
                env_credential=servable_by_env,
                thinking_switch=row.thinking_switch,
                cooldown=route_cooldown(measured),
                provider_down=provider.pk in down,
                env_api_key=env_api_key,
            )
        )
    policies = {row.pk: policy_snap_from_row(row) for row in RoutingPolicy.objects.all()}
    return Snapshot(
        version=version,
        models=models,
        routes={k: tuple(v) for k, v in routes.items()},
        policies=policies,
        project_policy=dict(project_policy or {}),
        organization_policy=dict(organization_policy or {}),
        provider_keys={k: dict(v) for k, v in (provider_keys or {}).items()},
        simulated_enabled=simulated_enabled,
        probe_share=float(settings.INFERBASE_COOLDOWN_PROBE_SHARE),
        explore_share=float(settings.INFERBASE_EXPLORE_SHARE),
    )


def _unix_day(day: date | None) -> int:
    """Return a day's start in Unix seconds (UTC), 0 for none."""
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()) if day is not None else 0


def micros_per_mtok(usd_per_mtok: Decimal) -> int:
    """Return a catalog price (USD per million tokens, six decimals) as integer micro-dollars per million tokens."""
    return int((usd_per_mtok * 1_000_000).to_integral_value(rounding=ROUND_HALF_UP))


def route_latency(measured: Any, prior: Any) -> RouteLatencySnap | None:
    """Return the route's latency from traffic when it has enough samples, else the catalog's prior
    (None when there is neither)."""
    if measured is not None and measured.samples >= settings.INFERBASE_EVIDENCE_MIN_SAMPLES:
        return RouteLatencySnap(
            ttft_ms_p50=measured.first_token_ms_p50,
            tokens_per_second=measured.output_tokens_per_s,
            samples=measured.samples,
            source="traffic",
            first_answer_token_ms_p50=measured.first_answer_token_ms_p50,
            end_to_end_ms_p50=measured.end_to_end_ms_p50,
        )
    if prior is not None:
        return RouteLatencySnap(prior.ttft_ms_p50, float(prior.tokens_per_second), 0, "catalog")
    return None


def route_cooldown(measured: Any) -> RouteCooldownSnap | None:
    """Return the route's fleet-wide cooldown, when its evidence has one."""
    if measured is None or measured.cooldown_until is None or measured.cooldown_started is None:
        return None
    return RouteCooldownSnap(measured.cooldown_started.timestamp(), measured.cooldown_until.timestamp(),
                             measured.cooldown_reason)


def snapshot_version_bump() -> str:
    """Mark every process's snapshot stale (call after any catalog, evidence, policy or key edit)."""
    version = uuid.uuid4().hex
    cache.set(VERSION_KEY, version, None)
    return version


