"""create_api_key says the plan and the policy, prints the key alone last, and never invents a policy by mistake."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from inferbase.accounts.models import ApiKey, Organization
from routing.models import RoutingPolicy

pytestmark = pytest.mark.django_db


def _create(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("create_api_key", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_a_new_organization_is_on_the_pro_plan_and_says_so() -> None:
    out, err = _create("--org", "acme", "--project", "web")
    assert out.strip().startswith("inf_") and len(out.strip().splitlines()) == 1
    assert "plan pro: list price plus a 5% markup" in err
    assert Organization.objects.get(slug="acme").plan == "pro"


def test_the_free_plan_says_every_request_costs_nothing() -> None:
    out, err = _create("--org", "acme", "--project", "web", "--plan", "free")
    assert "plan free: every request costs 0" in err
    assert ApiKey.objects.get().prefix == out.strip()[:12]


def test_changing_an_existing_organizations_plan_is_reported() -> None:
    _create("--org", "acme", "--project", "web", "--plan", "free")
    _, err = _create("--org", "acme", "--project", "web", "--plan", "pro")
    assert "(changed from free)" in err
    _, again = _create("--org", "acme", "--project", "web")
    assert "plan pro" in again and "changed" not in again


def test_an_unknown_policy_is_an_error_that_lists_the_existing_ones_and_creates_nothing() -> None:
    org = Organization.objects.create(slug="acme", name="acme")
    RoutingPolicy.objects.create(organization=org, name="fast")
    RoutingPolicy.objects.create(organization=None, name="house")
    RoutingPolicy.objects.create(organization=Organization.objects.create(slug="other", name="other"), name="secret")
    with pytest.raises(CommandError) as raised:
        _create("--org", "acme", "--project", "web", "--policy", "fsat")
    message = str(raised.value)
    assert "'fsat'" in message and "fast, house (shared)" in message and "secret" not in message
    with pytest.raises(CommandError):
        _create("--org", "newcomer", "--project", "web", "--policy", "fast")
    assert not ApiKey.objects.exists() and not RoutingPolicy.objects.filter(name="fsat").exists()
    assert not Organization.objects.filter(slug="newcomer").exists()


def test_the_organizations_policy_or_a_shared_one_is_used_and_create_policy_creates_a_missing_one() -> None:
    org = Organization.objects.create(slug="acme", name="acme")
    own = RoutingPolicy.objects.create(organization=org, name="fast")
    shared = RoutingPolicy.objects.create(organization=None, name="house")
    _, err = _create("--org", "acme", "--project", "web", "--policy", "fast", "--name", "a")
    _create("--org", "acme", "--project", "web", "--policy", "house", "--name", "b")
    _create("--org", "acme", "--project", "web", "--policy", "fast", "--create-policy", "--name", "c")
    _create("--org", "acme", "--project", "web", "--policy", "batch", "--create-policy", "--name", "d")
    assert "policy fast" in err
    keys = {key.name: key.policy for key in ApiKey.objects.select_related("policy")}
    assert keys["a"] == own and keys["b"] == shared and keys["c"] == own
    assert keys["d"].name == "batch" and keys["d"].organization_id == org.pk
    assert RoutingPolicy.objects.count() == 3


def test_create_policy_needs_a_policy_name() -> None:
    with pytest.raises(CommandError, match="--policy"):
        _create("--org", "acme", "--project", "web", "--create-policy")
