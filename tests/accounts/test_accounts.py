"""Accounts: keys stored as hashes and shown once, provider keys encrypted, policy inheritance."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from inferbase.accounts.crypto import secret_decrypt
from inferbase.accounts.models import ApiKey, Organization, Project, ProviderKey
from inferbase.accounts.services import api_key_create, provider_key_set
from inferbase.gateway.state import _snapshot_load
from providers.models import Provider
from routing.catalog import model_list
from routing.models import Route, RoutingPolicy
from routing.services import catalog_load, provider_add

pytestmark = pytest.mark.django_db


def test_create_api_key_prints_the_key_alone_on_its_last_line_and_stores_a_hash() -> None:
    out = StringIO()
    call_command("create_api_key", "--org", "acme", "--project", "web", "--plan", "free", stdout=out, stderr=StringIO())
    raw = out.getvalue().strip().splitlines()[-1]
    assert raw.startswith("inf_") and len(raw) > 30
    key = ApiKey.objects.get()
    assert key.key_hash == hashlib.sha256(raw.encode()).hexdigest()
    assert raw not in {key.prefix, key.key_hash, key.name}
    assert key.project.organization.plan == "free"
    assert Project.objects.get().name == "web"


def test_create_api_key_reuses_the_organization_and_project() -> None:
    api_key_create(org_slug="acme", project_name="web")
    api_key_create(org_slug="acme", project_name="web")
    assert Organization.objects.count() == 1 and Project.objects.count() == 1 and ApiKey.objects.count() == 2


def test_provider_key_is_encrypted_at_rest_and_never_shown() -> None:
    created = api_key_create(org_slug="acme", project_name="web")
    provider = Provider.objects.create(slug="groq", name="Groq", kind="openai-compatible", base_url="https://x")
    key = provider_key_set(project=created.api_key.project, provider=provider, secret="gsk_supersecret_1234")
    stored = ProviderKey.objects.get(pk=key.pk)
    assert "supersecret" not in stored.encrypted_secret
    assert secret_decrypt(stored.encrypted_secret) == "gsk_supersecret_1234"
    assert "supersecret" not in repr(stored) and "supersecret" not in str(stored)


def _catalog() -> None:
    catalog_load(catalog_path=Path(settings.INFERBASE_CATALOG_PATH), evidence_path=Path(settings.INFERBASE_EVIDENCE_PATH))


def test_policy_resolution_is_key_then_project_then_organization_then_inferbase() -> None:
    _catalog()
    created = api_key_create(org_slug="acme", project_name="web")
    key = created.api_key
    org = key.project.organization
    org_policy = RoutingPolicy.objects.create(organization=org, name="org", objective="cost")
    project_policy = RoutingPolicy.objects.create(organization=org, name="project", objective="latency")
    key_policy = RoutingPolicy.objects.create(organization=org, name="key", objective="quality")

    def resolved() -> tuple[str, str]:
        snap = _snapshot_load("v")
        policy = snap.policy_for(key_policy_id=ApiKey.objects.get(pk=key.pk).policy_id, project_id=key.project_id,
                                 organization_id=org.pk)
        return policy.source, policy.name

    assert resolved() == ("inferbase", "Inferbase default")
    org.default_policy = org_policy
    org.save()
    assert resolved() == ("organization", "org")
    key.project.default_policy = project_policy
    key.project.save()
    assert resolved() == ("project", "project")
    ApiKey.objects.filter(pk=key.pk).update(policy=key_policy)
    assert resolved() == ("key", "key")


def test_model_list_under_a_policy_that_requires_pinned_models_in_its_pool() -> None:
    _catalog()
    RoutingPolicy.objects.create(name="narrow", pool=["meta-llama-3.3-70b", "openai-gpt-oss-120b"], require_pinned_in_pool=True)
    snap = _snapshot_load("v")
    policy = next(p for p in snap.policies.values() if p.name == "narrow")
    assert [m["id"] for m in model_list(snap, policy=policy, project_id=None)] == [
        "meta-llama-3.3-70b", "meta-llama-3.3-70b:turbo", "openai-gpt-oss-120b"]
    strict = replace(policy, allow_variants=False)
    assert [m["id"] for m in model_list(snap, policy=strict, project_id=None)] == ["meta-llama-3.3-70b", "openai-gpt-oss-120b"]
    assert len(model_list(snap, policy=None, project_id=None)) >= 16


def test_models_served_only_by_a_project_key_are_appended_for_that_project(settings) -> None:  # type: ignore[no-untyped-def]
    settings.INFERBASE_SIMULATED_ROUTES = False
    _catalog()
    created = api_key_create(org_slug="acme", project_name="web")
    provider_add(name="company-vllm", base_url="http://10.0.0.1:8000/v1", api_key_env="NOT_SET_ANYWHERE_XYZ",
                 models=[("company-llama", "meta-llama/Llama-3.3-70B")])
    provider = Provider.objects.get(slug="company-vllm")
    provider_key_set(project=created.api_key.project, provider=provider, secret="sk-company")
    snap = _snapshot_load("v")
    assert "company-llama" not in [m["id"] for m in model_list(snap, policy=None, project_id=None)]
    mine = model_list(snap, policy=None, project_id=created.api_key.project_id)
    assert mine[-1] == {"id": "company-llama", "object": "model", "created": 0, "owned_by": "project",
                        "name": "company-llama"}


def test_bootstrap_is_idempotent_and_reuses_the_demo_key(tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    call_command("bootstrap", "--key-file", str(key_file), stdout=StringIO())
    first = key_file.read_text()
    call_command("bootstrap", "--key-file", str(key_file), stdout=StringIO())
    assert key_file.read_text() == first
    assert ApiKey.objects.count() == 1


def test_add_provider_declares_no_thinking_switch_unless_told() -> None:
    models = ["--base-url", "http://10.0.0.1:8000/v1", "--reasoning", "switchable"]
    call_command("add_provider", "--name", "plain-vllm", "--model", "plain-qwen=Qwen/Qwen3-8B", *models, stdout=StringIO())
    call_command("add_provider", "--name", "qwen-vllm", "--model", "qwen-8b=Qwen/Qwen3-8B", *models,
                 "--thinking-switch", "chat_template_kwargs", stdout=StringIO())
    switches = dict(Route.objects.values_list("provider__slug", "thinking_switch"))
    assert switches == {"plain-vllm": "none", "qwen-vllm": "chat_template_kwargs"}
    # Added again without the flag, the route keeps what was declared.
    call_command("add_provider", "--name", "qwen-vllm", "--model", "qwen-8b=Qwen/Qwen3-8B", *models, stdout=StringIO())
    assert Route.objects.get(provider__slug="qwen-vllm").thinking_switch == "chat_template_kwargs"
    with pytest.raises(CommandError, match="--reasoning switchable"):
        call_command("add_provider", "--name", "x", "--base-url", "http://x/v1", "--model", "m",
                     "--thinking-switch", "reasoning_effort", stdout=StringIO())


def test_catalog_routes_declare_their_thinking_switch_and_the_simulated_one_copies_the_cheapest() -> None:
    _catalog()
    switches = dict(Route.objects.filter(model__catalog_id="qwen3-32b").values_list("provider__slug", "thinking_switch"))
    assert switches == {"groq": "reasoning_effort", "cerebras": "none", "deepinfra": "reasoning_effort",
                        "simulated": "reasoning_effort"}
    assert set(Route.objects.filter(model__reasoning="none").values_list("thinking_switch", flat=True)) == {"none"}
