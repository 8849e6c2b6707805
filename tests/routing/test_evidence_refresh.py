"""The evidence task's service: samples in, per-route evidence and cooldowns out, the snapshot bumped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache

from routing.models import RouteEvidence, RouteSample
from routing.services import catalog_load, route_evidence_refresh, route_samples_store
from routing.snapshot import VERSION_KEY, snapshot_build

pytestmark = pytest.mark.django_db(transaction=True)

NOW = datetime(2026, 10, 12, 14, 0, tzinfo=UTC)
ROUTE = "simulated/meta-llama-3.3-70b"


def _samples(count: int, *, outcome: str = "served", first: int = 200, at: datetime = NOW,
             route: str = ROUTE) -> list[dict]:
    return [{"route_id": route, "created_at": (at - timedelta(seconds=i)).timestamp(), "outcome": outcome,
             "stream": True, "end_to_end_ms": first + 1000, "first_token_ms": first if outcome == "served" else None,
             "first_answer_token_ms": first if outcome == "served" else None,
             "output_tokens": 100 if outcome == "served" else None} for i in range(count)]


@pytest.fixture
def catalog() -> None:
    catalog_load(catalog_path=Path(settings.INFERBASE_CATALOG_PATH), evidence_path=Path(settings.INFERBASE_EVIDENCE_PATH))


def _route(snapshot, route_id: str):  # type: ignore[no-untyped-def]
    model_id = route_id.split("/", 1)[1]
    return next(r for r in snapshot.routes[model_id] if r.route_id == route_id)


def test_samples_become_evidence_and_bump_the_snapshot(catalog: None) -> None:
    route_samples_store(_samples(25))
    before = cache.get(VERSION_KEY)
    result = route_evidence_refresh(now=NOW)
    evidence = RouteEvidence.objects.get(route_id=ROUTE)
    assert (evidence.samples, evidence.first_token_ms_p50, evidence.end_to_end_ms_p50) == (25, 200, 1200)
    assert evidence.output_tokens_per_s == 100.0 and evidence.error_rate == 0.0
    assert result.version is not None and cache.get(VERSION_KEY) == result.version != before
    route = _route(snapshot_build("v"), ROUTE)
    assert route.latency is not None and route.latency.source == "traffic" and route.latency.ttft_ms_p50 == 200


def test_a_second_look_at_the_same_samples_changes_nothing(catalog: None) -> None:
    route_samples_store(_samples(25))
    route_evidence_refresh(now=NOW)
    assert route_evidence_refresh(now=NOW).version is None


def test_a_route_with_too_few_samples_keeps_its_catalog_prior(catalog: None) -> None:
    route_samples_store(_samples(settings.INFERBASE_EVIDENCE_MIN_SAMPLES - 1, first=5))
    route_evidence_refresh(now=NOW)
    latency = _route(snapshot_build("v"), ROUTE).latency
    assert latency is not None and latency.source == "catalog" and latency.ttft_ms_p50 != 5


def test_a_route_without_prior_or_samples_has_no_latency(catalog: None) -> None:
    from routing.services import provider_add

    provider_add(name="own", base_url="http://127.0.0.1:9/v1", models=[("own-model", "m")])
    assert _route(snapshot_build("v"), "own/own-model").latency is None


def test_samples_outside_the_window_do_not_count_and_old_ones_are_pruned(catalog: None) -> None:
    route_samples_store(_samples(25, at=NOW - timedelta(hours=2)))
    result = route_evidence_refresh(now=NOW)
    assert result.pruned == 25 and RouteSample.objects.count() == 0
    assert not RouteEvidence.objects.filter(route_id=ROUTE).exists()


def test_a_failing_route_cools_down_and_routing_sees_it(catalog: None) -> None:
    route_samples_store(_samples(12, outcome="error"))
    result = route_evidence_refresh(now=NOW)
    evidence = RouteEvidence.objects.get(route_id=ROUTE)
    assert result.cooling == 1
    assert evidence.cooldown_until == NOW + timedelta(seconds=settings.INFERBASE_COOLDOWN_SECONDS)
    assert evidence.cooldown_reason == "100% of its last 12 attempts failed"
    cooldown = _route(snapshot_build("v"), ROUTE).cooldown
    assert cooldown is not None and cooldown.until == evidence.cooldown_until.timestamp()
