"""Billing › Usage: spend per day as SVG bars, tables by model, project and key with names, CSV export; the
same figures as GET /usage, for the viewer's organization only."""

from __future__ import annotations

import csv
import io
import re
from datetime import date, timedelta

import pytest
from django.test import Client
from django.utils import timezone

from billing.models import UsageRollup
from inferbase.accounts.models import Organization

from .conftest import make_api_key, make_project

pytestmark = pytest.mark.django_db


def _rollup(organization: Organization, day: date, *, project=None, key=None, model: str = "alpha-7b",  # type: ignore[no-untyped-def]
            requests: int = 1, cost: int = 1000) -> None:
    UsageRollup.objects.create(day=day, organization_id=organization.pk, project_id=project.pk if project else 0,
                               api_key_id=key.pk if key else 0, model=model, requests=requests, prompt_tokens=10 * requests,
                               completion_tokens=20 * requests, cost_micros=cost)


@pytest.fixture
def usage(acme: Organization, globex: Organization, models: None) -> dict[str, object]:
    today = timezone.now().date()
    web = make_project(acme, name="acme-web")
    key = make_api_key(web, name="acme-frontend")
    _rollup(acme, today, project=web, key=key, model="alpha-7b", requests=3, cost=2_500_000)
    _rollup(acme, today - timedelta(days=2), project=web, key=key, model="beta-70b", requests=1, cost=1_234_567)
    _rollup(acme, today - timedelta(days=40), project=web, key=key, model="beta-70b", requests=9, cost=9_000_000)
    theirs = make_project(globex, name="globex-secret-project")
    _rollup(globex, today, project=theirs, key=make_api_key(theirs, name="globex-key"), model="beta-70b",
            requests=7, cost=77_000_000)
    return {"today": today, "web": web, "key": key}


def _csv(response) -> list[dict[str, str]]:  # type: ignore[no-untyped-def]
    return list(csv.DictReader(io.StringIO(response.content.decode())))


@pytest.mark.parametrize("viewer", ["admin", "analyst"])
def test_usage_shows_the_last_30_days_by_model_project_and_key_with_names(request, viewer: str, usage) -> None:  # type: ignore[no-untyped-def]
    client: Client = request.getfixturevalue(viewer)
    response = client.get("/portal/usage/")
    assert response.status_code == 200
    body = response.content.decode()
    assert re.search(r'id="usage-total">\$3\.734567<', body)  # 2.5 + 1.234567; the 40-day-old day is outside
    assert "Alpha 7B" in body and "Beta 70B" in body and "acme-web" in body and "acme-frontend" in body
    bars = re.findall(r'<g class="day" data-day="([0-9-]+)">', body)
    assert len(bars) == 30 and bars[-1] == usage["today"].isoformat()
    heights = dict(re.findall(r'data-day="([0-9-]+)"><title>[^<]*</title>\s*<rect [^>]*height="([0-9.]+)"', body))
    assert float(heights[usage["today"].isoformat()]) > float(heights[(usage["today"] - timedelta(days=2)).isoformat()]) > 0
    assert float(heights[(usage["today"] - timedelta(days=1)).isoformat()]) == 0


def test_the_page_answers_as_get_usage_does(admin: Client, usage) -> None:  # type: ignore[no-untyped-def]
    start = (usage["today"] - timedelta(days=60)).isoformat()
    end = usage["today"].isoformat()
    api = admin.get(f"/api/v1/usage?from={start}&to={end}&group_by=model").json()
    rows = _csv(admin.get(f"/portal/usage.csv?from={start}&to={end}&group_by=model"))
    assert {r["group"]: int(r["cost_micros"]) for r in rows} == {d["model"]: d["cost_micros"] for d in api["data"]}
    assert sum(int(r["cost_micros"]) for r in rows) == api["totals"]["cost_micros"] == 12_734_567
    assert {r["name"] for r in rows} == {"Alpha 7B", "Beta 70B"}
    assert re.search(r'id="usage-total">\$12\.734567<',
                     admin.get(f"/portal/usage/?from={start}&to={end}").content.decode())


def test_csv_by_day_project_and_key(admin: Client, usage) -> None:  # type: ignore[no-untyped-def]
    today = usage["today"].isoformat()
    by_day = _csv(admin.get(f"/portal/usage.csv?from={today}&to={today}"))
    assert [(r["group"], r["requests"], r["cost_usd"]) for r in by_day] == [(today, "3", "2.500000")]
    by_key = _csv(admin.get(f"/portal/usage.csv?from={today}&to={today}&group_by=key"))
    assert [(r["group"], r["name"]) for r in by_key] == [(str(usage["key"].pk), usage["key"].name + f" ({usage['key'].prefix}…)")]
    by_project = _csv(admin.get(f"/portal/usage.csv?from={today}&to={today}&group_by=project"))
    assert [r["name"] for r in by_project] == ["acme-web"]


def test_a_reversed_or_malformed_range_is_explained_in_words(admin: Client, usage) -> None:  # type: ignore[no-untyped-def]
    response = admin.get("/portal/usage/?from=2026-05-10&to=2026-05-01")
    assert response.status_code == 200 and b"is before the start" in response.content
    assert b"The range is not valid" in response.content
    assert b"Enter a day as YYYY-MM-DD" in admin.get("/portal/usage/?from=2026-5-1&to=2026-05-02").content
    assert admin.get("/portal/usage.csv?from=2026-05-10&to=2026-05-01").status_code == 400
    assert admin.get("/portal/usage.csv?group_by=planet").status_code == 400
    assert b"longer than 366 days" in admin.get("/portal/usage/?from=2024-01-01&to=2026-01-01").content


def test_outsider_sees_nothing_of_another_organization(outsider: Client, usage) -> None:  # type: ignore[no-untyped-def]
    body = outsider.get("/portal/usage/").content.decode()
    assert "acme-web" not in body and "acme-frontend" not in body and "Alpha 7B" not in body
    assert re.search(r'id="usage-total">\$77\.000000<', body)
    for group in ("day", "model", "project", "key"):
        rows = _csv(outsider.get(f"/portal/usage.csv?group_by={group}"))
        assert sum(int(r["cost_micros"]) for r in rows) == 77_000_000, group
        assert all("acme" not in r["name"] for r in rows)


def test_anonymous_goes_to_login_and_usage_is_in_the_navigation(analyst: Client, usage) -> None:  # type: ignore[no-untyped-def]
    for path in ("/portal/usage/", "/portal/usage.csv"):
        response = Client().get(path)
        assert response.status_code == 302 and response["Location"].startswith("/portal/login/?next="), path
    logs = analyst.get("/portal/logs/").content.decode()
    assert 'href="/portal/usage/"' in logs
