"""Access › Keys: admins create keys (shown once), revoke, rename and attach a policy, and store a project's
provider keys encrypted; analysts see names and prefixes only; another organization's key is a 404."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client

from inferbase.accounts.crypto import secret_decrypt
from inferbase.accounts.models import ApiKey, Organization, ProviderKey
from inferbase.accounts.selectors import key_info_get
from inferbase.accounts.services import api_key_hash
from providers.models import Provider
from routing.models import RoutingPolicy
from routing.snapshot import VERSION_KEY

from .conftest import make_api_key, make_project, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def groq(db: None) -> Provider:
    return Provider.objects.create(slug="groq", name="Groq", kind="openai-compatible", base_url="https://groq.example")


def test_admin_creates_a_key_shown_once_then_only_its_prefix(admin: Client, acme: Organization) -> None:
    project = make_project(acme, name="web")
    policy = RoutingPolicy.objects.create(organization=acme, name="Frugal")
    response = admin.post("/portal/keys/new/", {"project": project.pk, "name": "frontend", "policy": policy.pk})
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    raw = response.context["created"].raw_key
    assert raw.encode() in response.content
    key = ApiKey.objects.get(project=project)
    assert key.key_hash == api_key_hash(raw) and key.name == "frontend" and key.policy_id == policy.pk
    later = admin.get("/portal/keys/")
    assert raw.encode() not in later.content and key.prefix.encode() in later.content


def test_revoking_a_key_refuses_it_and_bumps_the_snapshot(admin: Client, acme: Organization) -> None:
    key = make_api_key(make_project(acme))
    cache.set(VERSION_KEY, "before")
    response = admin.post(f"/portal/keys/{key.pk}/revoke/")
    assert response.status_code == 302 and response["Location"] == "/portal/keys/"
    key.refresh_from_db()
    assert key.revoked_at is not None and key_info_get(key_hash=key.key_hash).active is False
    assert cache.get(VERSION_KEY) != "before"  # key lookups are cached per version: refused within a second
    assert b"revoked" in admin.get("/portal/keys/").content


def test_admin_renames_a_key_and_attaches_a_policy(admin: Client, acme: Organization, globex: Organization) -> None:
    key = make_api_key(make_project(acme))
    ours = RoutingPolicy.objects.create(organization=acme, name="Ours")
    theirs = RoutingPolicy.objects.create(organization=globex, name="Theirs")
    page = admin.get(f"/portal/keys/{key.pk}/")
    assert page.status_code == 200 and b"Theirs" not in page.content
    assert admin.post(f"/portal/keys/{key.pk}/", {"name": "renamed", "policy": ours.pk}).status_code == 302
    key.refresh_from_db()
    assert key.name == "renamed" and key.policy_id == ours.pk
    refused = admin.post(f"/portal/keys/{key.pk}/", {"name": "x", "policy": theirs.pk})
    assert refused.status_code == 400 and b"Select a valid choice" in refused.content
    assert admin.post(f"/portal/keys/{key.pk}/", {"name": "plain", "policy": ""}).status_code == 302
    key.refresh_from_db()
    assert key.name == "plain" and key.policy_id is None


def test_admin_stores_a_provider_key_encrypted_and_never_shows_it(admin: Client, acme: Organization,
                                                                   groq: Provider) -> None:
    project = make_project(acme, name="web")
    secret = "gsk_live_0123456789abcdef"
    response = admin.post("/portal/provider-keys/new/", {"project": project.pk, "provider": "groq", "secret": secret,
                                                         "label": "ours"})
    assert response.status_code == 302
    stored = ProviderKey.objects.get(project=project, provider=groq)
    assert secret not in stored.encrypted_secret and stored.last4 == "cdef"
    assert secret_decrypt(stored.encrypted_secret) == secret  # encrypted, not dropped: the gateway can use it
    page = admin.get("/portal/keys/").content.decode()
    assert secret not in page and "…cdef" in page
    short = admin.post("/portal/provider-keys/new/", {"project": project.pk, "provider": "groq", "secret": "abc"})
    assert short.status_code == 400 and b"too short" in short.content


def test_analysts_see_key_names_and_prefixes_only_and_every_write_is_403(analyst: Client, acme: Organization,
                                                                          groq: Provider) -> None:
    project = make_project(acme, name="web")
    key = make_api_key(project, name="frontend",
                       policy=RoutingPolicy.objects.create(organization=acme, name="Secret policy"))
    ProviderKey.objects.create(project=project, provider=groq, encrypted_secret="x", last4="wxyz", label="byok")
    page = analyst.get("/portal/keys/")
    body = page.content.decode()
    assert page.status_code == 200 and "frontend" in body and key.prefix in body
    assert "Secret policy" not in body and "wxyz" not in body and "byok" not in body
    assert "Create key" not in body and "Revoke" not in body and "Rename" not in body
    assert analyst.get(f"/portal/keys/{key.pk}/").status_code == 403
    for url, data in ((f"/portal/keys/{key.pk}/", {"name": "x"}), (f"/portal/keys/{key.pk}/revoke/", {}),
                      ("/portal/keys/new/", {"project": project.pk}),
                      ("/portal/provider-keys/new/", {"project": project.pk, "provider": "groq", "secret": "s" * 20})):
        assert analyst.post(url, data).status_code == 403, url
    key.refresh_from_db()
    assert key.name == "frontend" and key.revoked_at is None and ApiKey.objects.count() == 1
    assert ProviderKey.objects.get().last4 == "wxyz"


def test_another_organizations_key_is_a_404_and_its_project_not_a_choice(outsider: Client, acme: Organization,
                                                                          groq: Provider) -> None:
    project = make_project(acme, name="acme-web")
    key = make_api_key(project, name="acme-frontend")
    ProviderKey.objects.create(project=project, provider=groq, encrypted_secret="x", last4="wxyz", label="acme-byok")
    body = outsider.get("/portal/keys/").content.decode()
    assert "acme-frontend" not in body and key.prefix not in body and "acme-web" not in body
    assert "acme-byok" not in body and "wxyz" not in body  # nor its provider keys (the outsider is an admin)
    assert outsider.get(f"/portal/keys/{key.pk}/").status_code == 404
    assert outsider.post(f"/portal/keys/{key.pk}/", {"name": "mine"}).status_code == 404
    assert outsider.post(f"/portal/keys/{key.pk}/revoke/").status_code == 404
    assert outsider.post("/portal/keys/new/", {"project": project.pk}).status_code == 400
    assert outsider.post("/portal/provider-keys/new/", {"project": project.pk, "provider": "groq",
                                                        "secret": "s" * 20}).status_code == 400
    key.refresh_from_db()
    assert key.name == "acme-frontend" and key.revoked_at is None
    assert ApiKey.objects.count() == 1 and list(ProviderKey.objects.values_list("last4", flat=True)) == ["wxyz"]


def test_every_key_form_requires_the_csrf_token(acme: Organization, groq: Provider) -> None:
    project = make_project(acme)
    key = make_api_key(project)
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_user(acme, "admin"))
    for url, data in ((f"/portal/keys/{key.pk}/", {"name": "x"}), (f"/portal/keys/{key.pk}/revoke/", {}),
                      ("/portal/keys/new/", {"project": project.pk}),
                      ("/portal/provider-keys/new/", {"project": project.pk, "provider": "groq", "secret": "s" * 20})):
        assert client.post(url, data).status_code == 403, url
    key.refresh_from_db()
    assert key.revoked_at is None and ApiKey.objects.count() == 1 and not ProviderKey.objects.exists()
    page = client.get("/portal/keys/").content.decode()
    assert page.count('name="csrfmiddlewaretoken"') >= 3  # create, revoke, provider key (and log out)


def test_every_policy_and_key_page_sends_the_anonymous_to_login(acme: Organization) -> None:
    key = make_api_key(make_project(acme))
    policy = RoutingPolicy.objects.create(organization=acme, name="P")
    client = Client()
    for path in ("/portal/policies/", "/portal/policies/new/", f"/portal/policies/{policy.pk}/",
                 f"/portal/policies/{policy.pk}/edit/", "/portal/keys/", f"/portal/keys/{key.pk}/"):
        response = client.get(path)
        assert response.status_code == 302 and response["Location"].startswith("/portal/login/?next="), path
    for path in (f"/portal/policies/{policy.pk}/versions/1/restore/", f"/portal/keys/{key.pk}/revoke/",
                 "/portal/keys/new/", "/portal/provider-keys/new/"):
        assert client.post(path).status_code == 302, path
    key.refresh_from_db()
    assert key.revoked_at is None
