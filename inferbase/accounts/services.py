"""Writes for accounts: organizations, projects, API keys, provider keys."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from providers.models import Provider
from routing.models import RoutingPolicy

from .crypto import secret_encrypt
from .models import ApiKey, Organization, Project, ProviderKey

KEY_PREFIX = "inf_"


def api_key_hash(raw_key: str) -> str:
    """Return the stored hash of a raw API key (keys are random, so a plain SHA-256 suffices)."""
    return hashlib.sha256(raw_key.encode()).hexdigest()


@dataclass(frozen=True)
class CreatedKey:
    api_key: ApiKey
    raw_key: str


def organization_get_or_create(*, slug: str, plan: str | None = None) -> Organization:
    slug = slugify(slug) or "default"
    org, created = Organization.objects.get_or_create(slug=slug, defaults={"name": slug, "plan": plan or Organization.Plan.PRO})
    if plan and org.plan != plan and not created:
        org.plan = plan
        org.save(update_fields=["plan"])
    return org


def project_get_or_create(*, organization: Organization, name: str) -> Project:
    project, _ = Project.objects.get_or_create(organization=organization, name=slugify(name) or "default")
    return project


@transaction.atomic
def api_key_create(
    *, org_slug: str, project_name: str, plan: str | None = None, policy_name: str | None = None, name: str = ""
) -> CreatedKey:
    """Create the organization and project if missing and a new key; the raw key is returned only here."""
    org = organization_get_or_create(slug=org_slug, plan=plan)
    project = project_get_or_create(organization=org, name=project_name)
    policy = None
    if policy_name:
        policy = RoutingPolicy.objects.filter(organization=org, name=policy_name).first()
        if policy is None:
            policy = RoutingPolicy.objects.create(organization=org, name=policy_name)
    raw = KEY_PREFIX + secrets.token_urlsafe(32).replace("-", "a").replace("_", "b")
    key = ApiKey.objects.create(project=project, name=name, prefix=raw[:12], key_hash=api_key_hash(raw), policy=policy)
    return CreatedKey(api_key=key, raw_key=raw)


def api_key_revoke(*, api_key: ApiKey) -> None:
    api_key.revoked_at = timezone.now()
    api_key.save(update_fields=["revoked_at"])


def provider_key_set(*, project: Project, provider: Provider, secret: str, label: str = "") -> ProviderKey:
    """Store (or replace) a project's credential for a provider, encrypted."""
    key, _ = ProviderKey.objects.update_or_create(
        project=project,
        provider=provider,
        defaults={"encrypted_secret": secret_encrypt(secret), "last4": secret[-4:], "label": label},
    )
    return key
