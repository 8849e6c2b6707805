"""Billing › Budgets and limits: admins set a monthly budget and rate limits per organization, project and key
(saving bumps the snapshot version); the page shows spend this month against each budget with its alert
threshold; analysts read only; another organization's scopes are a 404 and never listed."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from billing.limits import Scope
from billing.models import Budget, RateLimit, UsageRollup
from billing.selectors import limits_snapshot_load
from inferbase.accounts.models import Organization
from routing.snapshot import VERSION_KEY

from .conftest import make_api_key, make_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def scopes(acme: Organization, globex: Organization) -> dict[str, object]:
    web = make_project(acme, name="acme-web")
    key = make_api_key(web, name="acme-frontend")
    theirs = make_project(globex, name="globex-secret")
    their_key = make_api_key(theirs, name="globex-key")
    today = timezone.now().date()
    UsageRollup.objects.create(day=today, organization_id=acme.pk, project_id=web.pk, api_key_id=key.pk,
                               model="alpha-7b", requests=5, cost_micros=42_500_000)
    UsageRollup.objects.create(day=today, organization_id=globex.pk, project_id=theirs.pk, api_key_id=their_key.pk,
                               model="alpha-7b", requests=5, cost_micros=99_000_000)
    return {"acme": acme, "web": web, "key": key, "theirs": theirs, "their_key": their_key}


def _form(admin: Client, path: str) -> dict[str, str]:
    page = admin.get(path)
    assert page.status_code == 200
    return {"monthly_budget": "", "alert_percent": "80", "requests_per_minute": "", "tokens_per_minute": ""}


def test_admin_sets_a_project_budget_and_limits_and_the_snapshot_version_moves(admin: Client, scopes) -> None:  # type: ignore[no-untyped-def]
    web = scopes["web"]
    path = f"/portal/budgets/project/{web.pk}/"
    before = cache.get(VERSION_KEY)
    response = admin.post(path, {**_form(admin, path), "monthly_budget": "50", "alert_percent": "80",
                                 "requests_per_minute": "60", "tokens_per_minute": "100000"})
    assert response.status_code == 302
    assert cache.get(VERSION_KEY) not in (None, before)
    limits = limits_snapshot_load().for_key(organization_id=scopes["acme"].pk, project_id=web.pk, key_id=scopes["key"].pk)
    project = next(s for s in limits if s.scope == Scope.PROJECT)
    assert (project.monthly_budget_micros, project.alert_percent, project.requests_per_minute,
            project.tokens_per_minute) == (50_000_000, 80, 60, 100_000)
    # 42.5 of 50 spent: 85%, past the 80% alert threshold, with the threshold marked on the meter
    page = admin.get(response["Location"]).content.decode()
    row = re.search(rf'<tr id="project-{web.pk}".*?</tr>', page, re.S).group(0)  # type: ignore[union-attr]
    assert 'class="alert"' in row and "$42.500000 of $50.000000" in row and "85.0%" in row
    assert 'class="threshold" style="left: 80%"' in row and "past the alert threshold" in row
    assert "Saved." in page


def test_clearing_removes_the_rows_and_a_budget_is_exact_to_the_micro_dollar(admin: Client, scopes) -> None:  # type: ignore[no-untyped-def]
    key = scopes["key"]
    path = f"/portal/budgets/key/{key.pk}/"
    admin.post(path, {"monthly_budget": "12.345678", "alert_percent": "90", "requests_per_minute": "2",
                      "tokens_per_minute": ""})
    assert Budget.objects.get(scope="key", scope_id=key.pk).monthly_micros == 12_345_678
    assert RateLimit.objects.get(scope="key", scope_id=key.pk).tokens_per_minute is None
    assert b'value="12.345678"' in admin.get(path).content
    before = cache.get(VERSION_KEY)
    admin.post(path, {"monthly_budget": "", "alert_percent": "80", "requests_per_minute": "", "tokens_per_minute": ""})
    assert not Budget.objects.filter(scope="key", scope_id=key.pk).exists()
    assert not RateLimit.objects.filter(scope="key", scope_id=key.pk).exists()
    assert cache.get(VERSION_KEY) != before


def test_the_organization_row_counts_the_whole_months_spend(admin: Client, scopes) -> None:  # type: ignore[no-untyped-def]
    org = scopes["acme"]
    admin.post(f"/portal/budgets/organization/{org.pk}/", {"monthly_budget": "40", "alert_percent": "80",
                                                          "requests_per_minute": "", "tokens_per_minute": ""})
    page = admin.get("/portal/budgets/").content.decode()
    row = re.search(rf'<tr id="organization-{org.pk}".*?</tr>', page, re.S).group(0)  # type: ignore[union-attr]
    assert 'class="over"' in row and "$42.500000 of $40.000000" in row and "budget reached" in row


def test_validation_explains_each_error_next_to_its_field(admin: Client, scopes) -> None:  # type: ignore[no-untyped-def]
    path = f"/portal/budgets/project/{scopes['web'].pk}/"
    response = admin.post(path, {"monthly_budget": "-5", "alert_percent": "0", "requests_per_minute": "0",
                                 "tokens_per_minute": "lots"})
    assert response.status_code == 200
    body = response.content.decode()
    assert re.search(r'id="monthly_budget-error">A budget cannot be negative\.', body)
    assert re.search(r'id="alert_percent-error">The alert threshold is at least 1%\.', body)
    assert re.search(r'id="requests_per_minute-error">A limit allows at least 1 request a minute', body)
    assert re.search(r'id="tokens_per_minute-error">Enter a whole number of tokens\.', body)
    assert "Nothing was saved" in body
    response = admin.post(path, {"monthly_budget": "1.0000001", "alert_percent": "80"})
    assert "six decimals" in response.content.decode()
    assert not Budget.objects.exists() and not RateLimit.objects.exists()


def test_analysts_read_but_every_write_is_a_403(analyst: Client, scopes) -> None:  # type: ignore[no-untyped-def]
    page = analyst.get("/portal/budgets/")
    assert page.status_code == 200 and b"acme-web" in page.content and b"/portal/budgets/project/" not in page.content
    path = f"/portal/budgets/project/{scopes['web'].pk}/"
    assert analyst.get(path).status_code == 403
    assert analyst.post(path, {"monthly_budget": "1", "alert_percent": "80"}).status_code == 403
    assert not Budget.objects.exists()


def test_outsider_sees_and_reaches_nothing_of_another_organization(outsider: Client, scopes) -> None:  # type: ignore[no-untyped-def]
    page = outsider.get("/portal/budgets/").content.decode()
    assert "acme-web" not in page and "acme-frontend" not in page and "Acme" not in page
    assert "$99.000000" in page  # its own month
    for path in (f"/portal/budgets/project/{scopes['web'].pk}/", f"/portal/budgets/key/{scopes['key'].pk}/",
                 f"/portal/budgets/organization/{scopes['acme'].pk}/", "/portal/budgets/planet/1/"):
        assert outsider.get(path).status_code == 404, path
        assert outsider.post(path, {"monthly_budget": "1", "alert_percent": "80"}).status_code == 404, path
    assert not Budget.objects.exists()
