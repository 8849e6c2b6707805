"""Portal fixtures: two organizations, an admin and an analyst of one, an outsider from the other, and
plain `make_<model>` factories for the rows the pages show."""

from __future__ import annotations

import itertools
import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from inferbase.accounts.models import ApiKey, Membership, Organization, Project
from observability.models import RequestLog, RoutingDecision
from routing.models import Model

PASSWORD = "correct horse battery staple"
_ids = itertools.count(1)


@pytest.fixture(autouse=True)
def _own_cache(settings: Any) -> None:
    """A fresh in-memory cache per test (failed-login counts must not leak between tests or runs), and a fast
    password hasher (the default costs most of a second per user)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                                   "LOCATION": f"portal-{uuid.uuid4().hex}"}}


def make_organization(**overrides: Any) -> Organization:
    slug = overrides.pop("slug", f"org{next(_ids)}")
    return Organization.objects.create(slug=slug, name=overrides.pop("name", slug.title()), **overrides)


def make_project(organization: Organization, **overrides: Any) -> Project:
    return Project.objects.create(organization=organization, name=overrides.pop("name", f"project{next(_ids)}"),
                                  **overrides)


def make_api_key(project: Project, **overrides: Any) -> ApiKey:
    n = next(_ids)
    fields = {"name": f"key{n}", "prefix": f"inf_{n:08d}", "key_hash": uuid.uuid4().hex}
    return ApiKey.objects.create(project=project, **{**fields, **overrides})


def make_user(organization: Organization | None, role: str = "analyst", **overrides: Any) -> User:
    user = User.objects.create_user(overrides.pop("username", f"user{next(_ids)}"), password=PASSWORD, **overrides)
    if organization is not None:
        Membership.objects.create(user=user, organization=organization, role=role)
    return user


def make_model(catalog_id: str, name: str) -> Model:
    return Model.objects.create(catalog_id=catalog_id, base_id=catalog_id.split(":")[0], name=name)


def make_request_log(api_key: ApiKey | None = None, **overrides: Any) -> RequestLog:
    n = next(_ids)
    fields: dict[str, Any] = {
        "request_id": f"req-{n:016x}", "created_at": timezone.now() - timedelta(seconds=n),
        "model_requested": "auto", "model_served": "alpha-7b", "route_served": "simulated/alpha-7b",
        "status_code": 200, "final_disposition": "served", "finish_reason": "stop", "prompt_tokens": 12,
        "completion_tokens": 30, "reasoning_tokens": 0, "cached_tokens": 0, "cost_micros": 1234, "latency_ms": 250,
        "task": "coding", "complexity": "easy", "thinking": "off",
        "attempts": [{"route": "simulated/alpha-7b", "model": "alpha-7b", "outcome": "served", "ms": 240}],
    }
    if api_key is not None:
        fields.update(organization_id=api_key.project.organization_id, project_id=api_key.project_id,
                      api_key_id=api_key.pk)
    return RequestLog.objects.create(**{**fields, **overrides})


def make_routing_decision(log: RequestLog, **overrides: Any) -> RoutingDecision:
    routing = {
        "task": log.task, "complexity": log.complexity, "estimated": False, "decisiveness": 0.25,
        "decisiveness_basis": "lead", "forced_single": False, "model": log.model_served, "measured": True,
        "proxied": False, "optimize_mode": "cost", "thinking": log.thinking or "off", "thinking_reason": "easy_prompt",
        "expected_wait_ms": 900, "wait_basis": "end_to_end",
        "reasoning": "Lowest expected cost among 2 eligible models (100 micro-dollars vs 125 micro-dollars for beta-70b)",
        "alternatives": [
            {"model": log.model_served, "rank": 1, "quality": 0.61, "expected_cost_micros": 100, "expected_wait_ms": 900},
            {"model": "beta-70b", "rank": 2, "quality": 0.74, "expected_cost_micros": 125, "expected_wait_ms": 1400},
        ],
        "policy": {"name": "Strict", "source": "key", "rules": ["objective: cost"],
                   "ignored": ["routing.quality_floor: none is looser than the policy's standard"]},
        "routing_time_ms": 1.2,
    }
    fields: dict[str, Any] = {
        "request_id": log.request_id, "organization_id": log.organization_id, "created_at": log.created_at,
        "routing_mode": "cost", "classifier_task_family": log.task, "complexity_band": log.complexity,
        "eligibility_pool_size": 3, "final_disposition": log.final_disposition, "decisiveness": 0.25,
        "chain_attempted": [f"simulated/{log.model_served}", "simulated/beta-70b"],
        "route_displays": {f"simulated/{log.model_served}": "Alpha 7B", "simulated/beta-70b": "Beta 70B"},
        "filter_trail": [{"step": "pool_loaded", "in": 3, "out": 3},
                         {"step": "preset_eligibility", "in": 3, "out": 2, "preset": "standard"},
                         {"step": "chain", "in": 2, "out": 2}],
        "filter_trail_text": ["3 models in the pool.", "2 of 3 models meet the standard quality floor for this task.",
                              "2 models in the final chain: the pick, then its fallbacks."],
        "routing": routing, "attempts": log.attempts,
    }
    return RoutingDecision.objects.create(**{**fields, **overrides})


@pytest.fixture
def acme(db: None) -> Organization:
    return make_organization(slug="acme", name="Acme")


@pytest.fixture
def globex(db: None) -> Organization:
    return make_organization(slug="globex", name="Globex")


@pytest.fixture
def models(db: None) -> None:
    make_model("alpha-7b", "Alpha 7B")
    make_model("beta-70b", "Beta 70B")


def _logged_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def admin(acme: Organization) -> Client:
    """An admin of Acme, logged in."""
    return _logged_in(make_user(acme, "admin", username="ada"))


@pytest.fixture
def analyst(acme: Organization) -> Client:
    """An analyst of Acme, logged in."""
    return _logged_in(make_user(acme, "analyst", username="alan"))


@pytest.fixture
def outsider(globex: Organization) -> Client:
    """An admin of Globex (another organization), logged in."""
    return _logged_in(make_user(globex, "admin", username="mallory"))


def at(minutes_ago: float) -> datetime:
    return timezone.now() - timedelta(minutes=minutes_ago)
