"""GET /routing-decisions/{id} also answers a logged-in portal user of the same organization."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from inferbase.accounts.models import Membership, Organization
from observability.models import RoutingDecision

pytestmark = pytest.mark.django_db


@pytest.fixture
def decision() -> RoutingDecision:
    org = Organization.objects.create(slug="acme", name="Acme")
    return RoutingDecision.objects.create(
        request_id="req-abc", organization_id=org.pk, created_at=timezone.now(), routing_mode="balanced",
        final_disposition="served", filter_trail=[{"step": "pool_loaded", "in": 3, "out": 3}],
        filter_trail_text=["3 models in the pool."],
    )


def _user(username: str, org_slug: str | None) -> User:
    user = User.objects.create_user(username, password="pw")
    if org_slug:
        org = Organization.objects.get_or_create(slug=org_slug, defaults={"name": org_slug})[0]
        Membership.objects.create(user=user, organization=org)
    return user


def test_member_of_the_organization_reads_the_decision(decision: RoutingDecision) -> None:
    client = Client()
    client.force_login(_user("ada", "acme"))
    response = client.get("/api/v1/inference/routing-decisions/req-abc")
    assert response.status_code == 200
    assert response.json()["filter_trail_text"] == ["3 models in the pool."]


def test_outsider_gets_the_same_404_as_a_missing_id(decision: RoutingDecision) -> None:
    client = Client()
    client.force_login(_user("mallory", "other"))
    outsider = client.get("/api/v1/inference/routing-decisions/req-abc")
    missing = client.get("/api/v1/inference/routing-decisions/req-nope")
    assert outsider.status_code == missing.status_code == 404
    assert outsider.json()["error"]["code"] == missing.json()["error"]["code"] == "not_found"


def test_anonymous_caller_is_a_401(decision: RoutingDecision) -> None:
    response = Client().get("/api/v1/inference/routing-decisions/req-abc")
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "authentication_error"
