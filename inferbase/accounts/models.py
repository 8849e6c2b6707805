"""Organizations, projects, API keys (stored as hashes) and provider keys (encrypted at rest)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Organization(models.Model):
    class Plan(models.TextChoices):
        FREE = "free"
        PRO = "pro"

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=128)
    plan = models.CharField(max_length=16, choices=Plan.choices, default=Plan.PRO)
    # Managed markup on provider prices, in basis points (500 = 5%).
    markup_bps = models.PositiveIntegerField(default=500)
    default_policy = models.ForeignKey(
        "routing.RoutingPolicy", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    """A portal user's place: one organization, with one role in it."""

    class Role(models.TextChoices):
        ADMIN = "admin"  # everything: policies, keys and provider keys too
        ANALYST = "analyst"  # reads Logs (and Usage)

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="membership")
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANALYST)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.user_id} {self.role} of {self.organization_id}"


class Project(models.Model):
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="projects")
    name = models.SlugField(max_length=64)
    default_policy = models.ForeignKey(
        "routing.RoutingPolicy", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "name"], name="project_org_name_unique")]

    def __str__(self) -> str:
        return f"{self.organization.slug}/{self.name}"


class ApiKey(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=128, blank=True, default="")
    prefix = models.CharField(max_length=16, help_text="The first characters of the key, shown to identify it.")
    key_hash = models.CharField(max_length=64, unique=True)
    policy = models.ForeignKey(
        "routing.RoutingPolicy", on_delete=models.SET_NULL, null=True, blank=True, related_name="api_keys"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def __str__(self) -> str:
        return f"{self.prefix}…"


class ProviderKey(models.Model):
    """A project's own upstream credential (bring-your-own-key). The secret is never returned or logged."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="provider_keys")
    provider = models.ForeignKey("providers.Provider", on_delete=models.CASCADE, related_name="provider_keys")
    label = models.CharField(max_length=128, blank=True, default="")
    encrypted_secret = models.TextField(editable=False)
    last4 = models.CharField(max_length=4, editable=False, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "provider"], name="provider_key_project_unique")]

    def __str__(self) -> str:
        return f"{self.provider.slug} key …{self.last4}"

    def __repr__(self) -> str:
        return f"<ProviderKey {self.pk} {self.provider_id} …{self.last4}>"
