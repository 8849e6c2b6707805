"""Reads for accounts, returning frozen values that may cross into async code."""

from __future__ import annotations

from dataclasses import dataclass

from .crypto import secret_decrypt
from .models import ApiKey, Organization, Project, ProviderKey


@dataclass(frozen=True, slots=True)
class KeyInfo:
    key_id: int
    project_id: int
    organization_id: int
    plan: str
    markup_bps: int
    policy_id: int | None
    active: bool


def key_info_get(*, key_hash: str) -> KeyInfo | None:
    """Return the key's identity and charging facts, or None for an unknown key."""
    row = (
        ApiKey.objects.select_related("project__organization")
        .filter(key_hash=key_hash)
        .only(
            "id", "policy_id", "revoked_at", "project__id", "project__organization__id",
            "project__organization__plan", "project__organization__markup_bps",
        )
        .first()
    )
    if row is None:
        return None
    org = row.project.organization
    return KeyInfo(
        key_id=row.pk,
        project_id=row.project.pk,
        organization_id=org.pk,
        plan=org.plan,
        markup_bps=org.markup_bps,
        policy_id=row.policy_id,
        active=row.revoked_at is None,
    )


def default_policy_maps() -> tuple[dict[int, int], dict[int, int]]:
    """Return (project id -> default policy id, organization id -> default policy id)."""
    projects = dict(Project.objects.filter(default_policy__isnull=False).values_list("id", "default_policy_id"))
    orgs = dict(Organization.objects.filter(default_policy__isnull=False).values_list("id", "default_policy_id"))
    return projects, orgs


def provider_secrets() -> dict[int, dict[str, str]]:
    """Return project id -> provider slug -> decrypted secret (kept in memory only)."""
    out: dict[int, dict[str, str]] = {}
    for row in ProviderKey.objects.select_related("provider"):
        secret = secret_decrypt(row.encrypted_secret)
        if secret:
            out.setdefault(row.project_id, {})[row.provider.slug] = secret
    return out


def user_organization_ids(*, user_id: int) -> list[int]:
    return list(Organization.objects.filter(members__id=user_id).values_list("id", flat=True))
