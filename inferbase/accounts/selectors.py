"""Reads for accounts, returning frozen values that may cross into async code."""

from __future__ import annotations

from dataclasses import dataclass

from billing.pricing import charge_multiplier

from .crypto import secret_decrypt
from .models import ApiKey, Membership, Organization, Project, ProviderKey


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


def provider_secrets(*, organization_id: int | None = None) -> dict[int, dict[str, str]]:
    """Return project id -> provider slug -> decrypted secret (kept in memory only), of one organization's
    projects when given."""
    rows = ProviderKey.objects.select_related("provider")
    if organization_id is not None:
        rows = rows.filter(project__organization_id=organization_id)
    out: dict[int, dict[str, str]] = {}
    for row in rows:
        secret = secret_decrypt(row.encrypted_secret)
        if secret:
            out.setdefault(row.project_id, {})[row.provider.slug] = secret
    return out


def user_organization_ids(*, user_id: int) -> list[int]:
    """Return the ids of the organizations the user belongs to (at most one)."""
    return list(Membership.objects.filter(user_id=user_id).values_list("organization_id", flat=True))


@dataclass(frozen=True, slots=True)
class Viewer:
    """A portal user's organization and role: every portal read starts from `organization_id`."""

    user_id: int
    organization_id: int
    organization_slug: str
    organization_name: str
    role: str

    @property
    def is_admin(self) -> bool:
        return self.role == Membership.Role.ADMIN


def viewer_get(*, user_id: int) -> Viewer | None:
    """Return the user's organization and role, or None for a user who belongs to none."""
    row = (Membership.objects.filter(user_id=user_id)
           .values_list("organization_id", "organization__slug", "organization__name", "role").first())
    if row is None:
        return None
    return Viewer(user_id, row[0], row[1], row[2], row[3])


def project_names(*, organization_id: int) -> dict[int, str]:
    """Return the organization's projects, id -> name, by name."""
    return dict(Project.objects.filter(organization_id=organization_id).order_by("name").values_list("id", "name"))


def api_key_labels(*, organization_id: int) -> dict[int, str]:
    """Return the organization's API keys, id -> "name (prefix…)" (the prefix alone for a nameless key), newest first."""
    rows = (ApiKey.objects.filter(project__organization_id=organization_id).order_by("-created_at", "-id")
            .values_list("id", "name", "prefix"))
    return {key_id: f"{name} ({prefix}…)" if name else f"{prefix}…" for key_id, name, prefix in rows}


@dataclass(frozen=True, slots=True)
class PolicyAttachments:
    organization_default: bool
    project_ids: frozenset[int]
    key_ids: frozenset[int]


def policy_attachments(*, organization_id: int, policy_id: int) -> PolicyAttachments:
    """Return where the organization's policy applies: its default, and which projects' and keys'."""
    org_default = Organization.objects.filter(pk=organization_id, default_policy_id=policy_id).exists()
    projects = Project.objects.filter(organization_id=organization_id, default_policy_id=policy_id)
    keys = ApiKey.objects.filter(project__organization_id=organization_id, policy_id=policy_id)
    return PolicyAttachments(org_default, frozenset(projects.values_list("id", flat=True)),
                             frozenset(keys.values_list("id", flat=True)))


def api_key_list(*, organization_id: int) -> list[ApiKey]:
    """Return the organization's API keys with their projects and policies, by project then newest first."""
    return list(ApiKey.objects.filter(project__organization_id=organization_id).select_related("project", "policy")
                .order_by("project__name", "-created_at", "-id"))


def api_key_get(*, organization_id: int, key_id: int) -> ApiKey | None:
    """Return the organization's key with this id, or None (another organization's is None too)."""
    return ApiKey.objects.filter(project__organization_id=organization_id, pk=key_id).select_related("project").first()


def project_get(*, organization_id: int, project_id: int) -> Project | None:
    return Project.objects.filter(organization_id=organization_id, pk=project_id).first()


def provider_key_list(*, organization_id: int) -> list[ProviderKey]:
    """Return the organization's provider keys (never their secrets: the rows keep them encrypted)."""
    return list(ProviderKey.objects.filter(project__organization_id=organization_id)
                .select_related("project", "provider").order_by("project__name", "provider__slug"))


def organization_cost_multiplier(*, organization_id: int) -> float:
    """Return what the organization pays per list-price micro-dollar (0 on the free plan), as routing estimates it."""
    plan, markup_bps = Organization.objects.filter(pk=organization_id).values_list("plan", "markup_bps").get()
    return charge_multiplier(plan=plan, markup_bps=markup_bps)

