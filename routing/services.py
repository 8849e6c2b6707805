"""Writes for routing: load the shipped catalog and evidence files, add a provider, store route samples
and aggregate them into evidence."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction

from providers.base import NO_THINKING_SWITCH
from providers.models import Provider

from .evidence import Cooldown, CooldownRules, Sample, Window, cooldown_next, in_window, route_figures
from .feeds import FeedCheck, feed_check
from .models import (
    BenchmarkFeedLoad,
    BenchmarkScore,
    Model,
    PolicyVersion,
    Route,
    RouteEvidence,
    RouteLatency,
    RouteSample,
    RoutingPolicy,
)
from .policies import POLICY_FIELDS, policy_diff, policy_fields, version_fields
from .snapshot import EVIDENCE_REFRESHED_KEY, snapshot_version_bump

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
                "name": m["name"], "author": m.get("author", ""), "released": _released(m.get("released")),
                "supports_tools": bool(caps.get("tools")),
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


def _released(month: str | None) -> date | None:
    """Return the first day of a catalog release month ("YYYY-MM"), None without one."""
    return date.fromisoformat(f"{month}-01") if month else None


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
    check = feed_check(evidence, set(models))
    if not check.valid:
        raise ValueError("the shipped evidence is not a valid feed: " + "; ".join(check.errors))
    _scores_apply(check)
    for route_key, lat in evidence.get("route_latency", {}).items():
        provider_slug, _, model_id = route_key.partition("/")
        route = Route.objects.filter(provider__slug=provider_slug, model__catalog_id=model_id).first()
        if route is None:
            continue
        RouteLatency.objects.update_or_create(route=route, defaults={
            "ttft_ms_p50": int(lat["ttft_ms_p50"]), "ttft_ms_p90": lat.get("ttft_ms_p90"),
            "tokens_per_second": float(lat["tokens_per_second"]), "samples": 0,  # a prior, not samples
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


SAMPLE_COLUMNS = ("route_id", "created_at", "outcome", "stream", "first_token_ms", "first_answer_token_ms",
                  "end_to_end_ms", "output_tokens")


def route_samples_store(rows: list[dict[str, Any]]) -> None:
    """Insert route samples (the log writer's batch) in one executemany; `created_at` may be seconds since
    the epoch. Plain SQL, as the writer's own inserts: the ORM's per-object work cost more than the write."""
    if not rows:
        return
    quote = connection.ops.quote_name
    sql = (f"INSERT INTO {quote(RouteSample._meta.db_table)} ({', '.join(quote(c) for c in SAMPLE_COLUMNS)}) "
           f"VALUES ({', '.join(['%s'] * len(SAMPLE_COLUMNS))})")
    adapt = connection.ops.adapt_datetimefield_value
    params = [(row["route_id"], adapt(_aware(row["created_at"])), row["outcome"], bool(row["stream"]),
               row["first_token_ms"], row["first_answer_token_ms"], row["end_to_end_ms"], row["output_tokens"])
              for row in rows]
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:  # the writer's transaction, when in one
        cursor.executemany(sql, params)


def _aware(value: Any) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromtimestamp(float(value), tz=UTC)


def _epoch(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


@dataclass(frozen=True)
class EvidenceRefreshResult:
    routes: int
    changed: int
    cooling: int
    pruned: int
    version: str | None  # the snapshot version set, when anything routing reads changed


def evidence_settings() -> tuple[Window, CooldownRules]:
    """Return the evidence window and the cooldown rules from settings."""
    window = Window(float(settings.INFERBASE_EVIDENCE_WINDOW_SECONDS), int(settings.INFERBASE_EVIDENCE_MAX_SAMPLES))
    rules = CooldownRules(
        threshold=float(settings.INFERBASE_COOLDOWN_FAILURE_RATE),
        min_samples=int(settings.INFERBASE_COOLDOWN_MIN_SAMPLES),
        window_seconds=float(settings.INFERBASE_COOLDOWN_WINDOW_SECONDS),
        seconds=float(settings.INFERBASE_COOLDOWN_SECONDS),
    )
    return window, rules


def _samples_of(route_id: str, since: datetime, limit: int) -> list[Sample]:
    rows = (RouteSample.objects.filter(route_id=route_id, created_at__gte=since).order_by("-created_at")
            .values_list("created_at", "outcome", "end_to_end_ms", "first_token_ms", "first_answer_token_ms",
                         "output_tokens")[:limit])
    return [Sample(at=at.timestamp(), outcome=outcome, end_to_end_ms=e2e, first_token_ms=first,
                   first_answer_token_ms=answer, output_tokens=tokens)
            for at, outcome, e2e, first, answer, tokens in rows]


EVIDENCE_FIELDS = ("window", "samples", "first_token_ms_p50", "first_token_ms_p90", "first_answer_token_ms_p50",
                   "first_answer_token_ms_p90", "end_to_end_ms_p50", "end_to_end_ms_p90", "output_tokens_per_s",
                   "failure_samples", "error_rate", "timeout_rate", "truncation_rate", "cooldown_started",
                   "cooldown_until", "cooldown_reason")


def route_evidence_refresh(*, now: datetime | None = None) -> EvidenceRefreshResult:
    """Aggregate each route's recent samples into its evidence row, start or end cooldowns, prune samples
    older than any window needs, and bump the snapshot version when anything routing reads changed."""
    now = now or datetime.now(UTC)
    now_s = now.timestamp()
    window, rules = evidence_settings()
    horizon_s = max(window.seconds, rules.window_seconds + rules.seconds)
    horizon = now - timedelta(seconds=horizon_s)
    pruned, _ = RouteSample.objects.filter(created_at__lt=horizon).delete()
    existing = {row.route_id: row for row in RouteEvidence.objects.all()}
    route_ids = set(RouteSample.objects.filter(created_at__gte=horizon).values_list("route_id", flat=True).distinct())
    changed = cooling = 0
    for route_id in sorted(route_ids | set(existing)):
        samples = _samples_of(route_id, horizon, max(window.max_samples, rules.min_samples))
        figures = route_figures(in_window(samples, window, now_s))
        row = existing.get(route_id)
        current = None
        if row is not None and row.cooldown_until is not None and row.cooldown_started is not None:
            current = Cooldown(row.cooldown_started.timestamp(), row.cooldown_until.timestamp(), row.error_rate, 0)
        cooldown = cooldown_next(samples, current, rules, now_s)
        values: dict[str, Any] = {"window": window.text(), **{f: getattr(figures, f) for f in (
            "samples", "first_token_ms_p50", "first_token_ms_p90", "first_answer_token_ms_p50",
            "first_answer_token_ms_p90", "end_to_end_ms_p50", "end_to_end_ms_p90", "output_tokens_per_s",
            "failure_samples", "error_rate", "timeout_rate", "truncation_rate")}}
        if cooldown is None:
            values.update(cooldown_started=None, cooldown_until=None, cooldown_reason="")
        else:
            cooling += 1
            values.update(
                cooldown_started=_aware(cooldown.since), cooldown_until=_aware(cooldown.until),
                cooldown_reason=(row.cooldown_reason if cooldown is current and row is not None else
                                 f"{round(cooldown.failure_rate * 100)}% of its last {cooldown.samples} attempts failed"),
            )
        if row is None:
            RouteEvidence.objects.create(route_id=route_id, updated_at=now, **values)
            changed += 1
        elif any(_differs(getattr(row, f), values[f]) for f in EVIDENCE_FIELDS):
            RouteEvidence.objects.filter(pk=row.pk).update(updated_at=now, **values)
            changed += 1
    version = snapshot_version_bump() if changed else None
    cache.set(EVIDENCE_REFRESHED_KEY, now_s, None)
    return EvidenceRefreshResult(routes=len(route_ids | set(existing)), changed=changed, cooling=cooling,
                                 pruned=pruned, version=version)


def _differs(old: Any, new: Any) -> bool:
    if isinstance(old, datetime) or isinstance(new, datetime):
        return _epoch(old) != _epoch(new)
    return old != new


SCORE_FIELDS = ("score", "source", "source_title", "source_url", "as_of", "feed_version")


def _scores_apply(check: FeedCheck) -> int:
    """Write a checked feed's scores (adding or replacing cells; cells the feed lacks stay); return how many."""
    pks = dict(Model.objects.filter(catalog_id__in={s.model_id for s in check.scores}).values_list("catalog_id", "pk"))
    existing = {(row.model_id, row.task): row for row in BenchmarkScore.objects.filter(model_id__in=pks.values())}
    created, updated = [], []
    for score in check.scores:
        values = {"score": score.score, "source": score.source, "source_title": score.source_title,
                  "source_url": score.source_url, "as_of": score.as_of, "feed_version": check.version}
        row = existing.get((pks[score.model_id], score.task))
        if row is None:
            created.append(BenchmarkScore(model_id=pks[score.model_id], task=score.task, **values))
        else:
            for name, value in values.items():
                setattr(row, name, value)
            updated.append(row)
    BenchmarkScore.objects.bulk_create(created, batch_size=500)
    BenchmarkScore.objects.bulk_update(updated, SCORE_FIELDS, batch_size=500)
    return len(created) + len(updated)


class FeedReadError(Exception):
    """The feed could not be read or parsed."""


def feed_read(location: str, *, timeout: float = 10.0) -> Any:
    """Return a feed's JSON from a file path or an http(s) URL; raise FeedReadError."""
    try:
        if location.startswith(("http://", "https://")):
            import httpx

            response = httpx.get(location, timeout=timeout, follow_redirects=True)
            response.raise_for_status()
            return response.json()
        return json.loads(Path(location).read_text())
    except Exception as exc:  # any failure to fetch or parse is the feed's: reported, nothing applied
        raise FeedReadError(f"{type(exc).__name__}: {exc}") from exc


logger = logging.getLogger("inferbase.routing")


@transaction.atomic
def benchmark_feed_load(*, feed: str, data: Any | None = None) -> BenchmarkFeedLoad | None:
    """Check a feed whole and apply it, or change nothing and record why; return the history row, or None
    when this feed's version is the one last applied from it. Bumps the snapshot when it applies."""
    try:
        content = feed_read(feed) if data is None else data
    except FeedReadError as exc:
        logger.warning("benchmark feed %s rejected: %s", feed, exc)
        return BenchmarkFeedLoad.objects.create(feed=feed, applied=False, errors=[str(exc)])
    check = feed_check(content, set(Model.objects.values_list("catalog_id", flat=True)))
    if not check.valid:
        logger.warning("benchmark feed %s (version %s) rejected, nothing changed: %s", feed, check.version or "?",
                       "; ".join(check.errors[:5]))
        return BenchmarkFeedLoad.objects.create(feed=feed, version=check.version, as_of=check.as_of, applied=False,
                                                errors=list(check.errors))
    last = BenchmarkFeedLoad.objects.filter(feed=feed, applied=True).first()
    if last is not None and last.version == check.version:
        return None
    count = _scores_apply(check)
    load = BenchmarkFeedLoad.objects.create(feed=feed, version=check.version, as_of=check.as_of, applied=True,
                                            scores=count, unverified=check.unverified, content=content,
                                            errors=[f"skipped unknown model {m}" for m in check.skipped_models])
    transaction.on_commit(snapshot_version_bump)
    return load


def benchmark_feeds_refresh() -> list[BenchmarkFeedLoad]:
    """Load every configured feed (settings.INFERBASE_BENCHMARK_FEEDS), in order; return what was recorded."""
    loads = []
    for feed in settings.INFERBASE_BENCHMARK_FEEDS:
        load = benchmark_feed_load(feed=feed)
        if load is not None:
            loads.append(load)
    return loads


@transaction.atomic
def routing_policy_save(*, policy: RoutingPolicy, fields: dict[str, Any], author: str,
                        note: str = "") -> PolicyVersion | None:
    """Write the fields to the policy (new or existing) and record the result as its next version; return the
    version, or None when nothing changed. Every process routes by it within a second: the save bumps the
    snapshot version (the post-save signal), and again once the transaction commits so that no process can
    rebuild its snapshot from the rows as they were before the commit."""
    unknown = set(fields) - set(POLICY_FIELDS)
    if unknown:
        raise ValueError(f"not policy fields: {', '.join(sorted(unknown))}")
    last = policy.versions.first() if policy.pk else None
    if policy.pk and last is None:  # made before versions (manage.py, the admin): its state so far is version 1
        last = PolicyVersion.objects.create(policy=policy, number=1, fields=policy_fields(policy),
                                            note="as it was before its first portal edit")
    for name, value in fields.items():
        setattr(policy, name, value)
    recorded = policy_fields(policy)
    if last is not None and not policy_diff(last.fields, recorded):
        return None
    policy.save()
    number = 1 if last is None else last.number + 1
    version = PolicyVersion.objects.create(policy=policy, number=number, author=author, fields=recorded, note=note)
    transaction.on_commit(snapshot_version_bump)
    return version


def routing_policy_restore(*, policy: RoutingPolicy, version: PolicyVersion, author: str) -> PolicyVersion | None:
    """Make an earlier version's fields current again, as a new version (None when they already are)."""
    return routing_policy_save(policy=policy, fields=version_fields(version.fields), author=author,
                               note=f"restored from version {version.number}")
