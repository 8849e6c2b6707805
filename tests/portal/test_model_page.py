"""Models › a model: the evidence GET /models/{id} shows (per route latency p50/p90, samples, source, failures,
cooldown; benchmark scores with source, as-of, unverified), with the model's name; linked from a decision."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from inferbase.accounts.models import Organization
from providers.models import Provider
from routing.models import BenchmarkScore, Model, Route, RouteEvidence, RouteLatency

from .conftest import make_api_key, make_project, make_request_log, make_routing_decision

pytestmark = pytest.mark.django_db


@pytest.fixture
def alpha(models: None, settings) -> Model:  # type: ignore[no-untyped-def]
    settings.INFERBASE_EVIDENCE_MIN_SAMPLES = 20
    model = Model.objects.get(catalog_id="alpha-7b")
    fast = Provider.objects.create(slug="fastco", name="FastCo", base_url="http://fast.invalid/v1", kind="openai-compatible")
    slow = Provider.objects.create(slug="slowco", name="SlowCo", base_url="http://slow.invalid/v1", kind="openai-compatible")
    for provider in (fast, slow):
        route = Route.objects.create(model=model, provider=provider, upstream_model="alpha")
        RouteLatency.objects.create(route=route, ttft_ms_p50=333, ttft_ms_p90=777, tokens_per_second=44)
    now = timezone.now()
    RouteEvidence.objects.create(route_id="fastco/alpha-7b", samples=120, window="1h", first_token_ms_p50=210,
                                 first_token_ms_p90=480, end_to_end_ms_p50=1900, output_tokens_per_s=88,
                                 error_rate=0.025, timeout_rate=0.0, truncation_rate=0.0, failure_samples=120,
                                 updated_at=now)
    RouteEvidence.objects.create(route_id="slowco/alpha-7b", samples=3, window="1h", first_token_ms_p50=9999,
                                 error_rate=0.5, failure_samples=4, updated_at=now,
                                 cooldown_started=now, cooldown_until=now + timedelta(minutes=5))
    BenchmarkScore.objects.create(model=model, task="coding", score=0.61, source_title="LiveCodeBench v5",
                                  source_url="https://livecodebench.example/v5", as_of="2025-06-01")
    BenchmarkScore.objects.create(model=model, task="translation", score=0.5, source_title="", as_of="")
    return model


def _row(body: str, attr: str, value: str) -> str:
    return re.search(rf'<tr {attr}="{re.escape(value)}">.*?</tr>', body, re.S).group(0)  # type: ignore[union-attr]


@pytest.mark.parametrize("viewer", ["admin", "analyst"])
def test_the_model_page_shows_the_evidence_of_get_models_id(request, viewer: str, alpha: Model) -> None:  # type: ignore[no-untyped-def]
    client: Client = request.getfixturevalue(viewer)
    response = client.get("/portal/models/alpha-7b/")
    assert response.status_code == 200
    body = response.content.decode()
    assert "<h1>Alpha 7B</h1>" in body
    fast = _row(body, "data-route", "fastco/alpha-7b")
    assert "210 / 480 ms" in fast and "1900 ms" in fast and ">120<" in fast and "source-traffic" in fast
    assert "2.5%" in fast and ">none<" in fast
    slow = _row(body, "data-route", "slowco/alpha-7b")  # too few samples: the catalog's prior, and says so
    assert "333 / 777 ms" in slow and "9999" not in slow and "source-catalog" in slow and "50.0%" in slow
    assert re.search(r'<strong class="bad">until \w+ \d+, [0-9:]+ UTC</strong>', slow)
    coding = _row(body, "data-task", "coding")
    assert 'href="https://livecodebench.example/v5"' in coding and "LiveCodeBench v5" in coding and "2025-06-01" in coding
    assert "unverified" not in coding
    assert "unverified" in _row(body, "data-task", "translation")


def test_the_same_figures_as_the_api(admin: Client, alpha: Model, settings) -> None:  # type: ignore[no-untyped-def]
    from routing.selectors import model_enabled_routes, model_evidence

    evidence = model_evidence(model_id="alpha-7b", routes=model_enabled_routes(model_id="alpha-7b"))
    assert [r["route"] for r in evidence["routes"]] == ["fastco/alpha-7b", "slowco/alpha-7b"]
    body = admin.get("/portal/models/alpha-7b/").content.decode()
    for route in evidence["routes"]:
        assert f"{route['latency']['samples']}<" in _row(body, "data-route", route["route"])


def test_an_unknown_model_is_a_404(admin: Client, models: None) -> None:
    assert admin.get("/portal/models/no-such-model/").status_code == 404
    assert Client().get("/portal/models/alpha-7b/").status_code == 302


def test_a_decision_links_its_served_model_to_its_page(admin: Client, acme: Organization, models: None) -> None:
    log = make_request_log(make_api_key(make_project(acme)))
    make_routing_decision(log)
    body = admin.get(f"/portal/logs/{log.request_id}/").content.decode()
    assert '<a class="model-link" href="/portal/models/alpha-7b/">Alpha 7B</a>' in body
