"""Writes for accounts: organizations, projects, API keys, provider keys."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.text import slugify

from providers.models import Provider
from routing.models import RoutingPolicy

from .crypto import secret_encrypt
from .errors import PortalUserError, UnknownPolicyError
from .models import ApiKey, Membership, Organization, Project, ProviderKey

KEY_PREFIX = "inf_"


def api_key_hash(raw_key: str) -> str:
    """Return the stored hash of a raw API key (keys are random, so a plain SHA-256 suffices)."""
    return hashlib.sha256(raw_key.encode()).hexdigest()


@dataclass(frozen=True)
class CreatedKey:
    api_key: ApiKey
    raw_key: str
    previous_plan: str | None = None  # the organization's plan before this call changed it


def organization_get_or_create(*, slug: str, plan: str | None = None) -> tuple[Organization, str | None]:
    """Return the organization (new ones on `plan`, else pro) and its former plan when `plan` changed it."""
    slug = slugify(slug) or "default"
    org, created = Organization.objects.get_or_create(slug=slug, defaults={"name": slug, "plan": plan or Organization.Plan.PRO})
    if plan and org.plan != plan and not created:
        previous = org.plan
        org.plan = plan
        org.save(update_fields=["plan"])
        return org, previous
    return org, None


def project_get_or_create(*, organization: Organization, name: str) -> Project:
    project, _ = Project.objects.get_or_create(organization=organization, name=slugify(name) or "default")
    return project


def routing_policy_for_key(*, organization: Organization, name: str, create: bool = False) -> RoutingPolicy:
    """Return the organization's policy by this name, else a shared one (no organization).

    Raise UnknownPolicyError, listing the policies there are, when neither exists, unless `create`:
    then create it for the organization with the default settings."""
    policies = RoutingPolicy.objects.filter(Q(organization=organization) | Q(organization__isnull=True))
    by_name: dict[str, RoutingPolicy] = {}
    for policy in policies:
        if policy.organization_id is not None or policy.name not in by_name:  # the organization's own wins
            by_name[policy.name] = policy
    if name in by_name:
        return by_name[name]
    if create:
        return RoutingPolicy.objects.create(organization=organization, name=name)
    raise UnknownPolicyError(name, [f"{n} (shared)" if p.organization_id is None else n for n, p in sorted(by_name.items())])


@transaction.atomic
def api_key_create(
    *, org_slug: str, project_name: str, plan: str | None = None, policy_name: str | None = None,
    create_policy: bool = False, name: str = "",
) -> CreatedKey:
    """Create the organization and project if missing and a new key; the raw key is returned only here.

    Raise UnknownPolicyError (and create nothing) when `policy_name` names no policy and not `create_policy`."""
    org, previous_plan = organization_get_or_create(slug=org_slug, plan=plan)
    project = project_get_or_create(organization=org, name=project_name)
    policy = None
    if policy_name:
        policy = routing_policy_for_key(organization=org, name=policy_name, create=create_policy)
    raw = KEY_PREFIX + secrets.token_urlsafe(32).replace("-", "a").replace("_", "b")
    key = ApiKey.objects.create(project=project, name=name, prefix=raw[:12], key_hash=api_key_hash(raw), policy=policy)
    return CreatedKey(api_key=key, raw_key=raw, previous_plan=previous_plan)


def api_key_revoke(*, api_key: ApiKey) -> None:
    api_key.revoked_at = timezone.now()
    api_key.save(update_fields=["revoked_at"])


def provider_key_set(*, project: Project, provider: Provider, secret: str, label: str = "") -> ProviderKey:
    """Store (or replace) a project's credential for a provider, encrypted."""
    key, _ = ProviderKey.objects.update_or_create(
        project=project, provider=provider, defaults={**provider_key_secret_fields(secret), "label": label})
    return key


def provider_key_secret_fields(secret: str) -> dict[str, str]:
    """Return how a provider key's secret is stored: encrypted, and its last four characters for display."""
    return {"encrypted_secret": secret_encrypt(secret), "last4": secret[-4:]}


@transaction.atomic
def portal_user_create(*, org_slug: str, role: str, username: str, password: str, email: str = "",
                       create_org: bool = False) -> AbstractBaseUser:
    """Create a portal user belonging to the organization with the role.

    Raise PortalUserError (and create nothing) for an unknown role, a taken username, an empty password, or an
    organization that does not exist (unless `create_org`)."""
    if role not in Membership.Role.values:
        raise PortalUserError(f"Unknown role {role!r}: choose one of {', '.join(Membership.Role.values)}.")
    if not password:
        raise PortalUserError("The password must not be empty.")
    users = get_user_model()
    if users.objects.filter(username=username).exists():
        raise PortalUserError(f"A user named {username!r} already exists.")
    org = Organization.objects.filter(slug=org_slug).first()
    if org is None:
        if not create_org:
            known = ", ".join(Organization.objects.order_by("slug").values_list("slug", flat=True)) or "none yet"
            raise PortalUserError(f"No organization {org_slug!r}. Existing organizations: {known}.")
        org, _ = organization_get_or_create(slug=org_slug)
    user = users.objects.create_user(username=username, email=email, password=password)
    Membership.objects.create(user=user, organization=org, role=role)
    return user
