from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from .models import ApiKey, Membership, Organization, Project, ProviderKey
from .services import api_key_revoke, provider_key_secret_fields


class MembershipInline(admin.TabularInline):
    """Portal users of the organization and their roles (`manage.py create_portal_user` makes them)."""

    model = Membership
    extra = 0
    raw_id_fields = ("user",)


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "plan", "markup_bps", "default_policy")
    inlines = (MembershipInline,)


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "organization", "default_policy")


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    """Keys are made by `manage.py create_api_key` (the raw key is shown once) and revoked, never un-revoked or
    deleted: the logs keep naming the key that made each request."""

    list_display = ("prefix", "name", "project", "policy", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("prefix", "key_hash", "created_at", "last_used_at", "revoked_at")
    actions = ("revoke",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: ApiKey | None = None) -> bool:
        return False

    @admin.action(description="Revoke the selected API keys", permissions=("change",))
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        for key in queryset.filter(revoked_at__isnull=True):
            api_key_revoke(api_key=key)


class ProviderKeyForm(forms.ModelForm):
    secret = forms.CharField(widget=forms.PasswordInput(render_value=False), required=False,
                             help_text="Stored encrypted; never shown again. Leave empty to keep the current one.")

    class Meta:
        model = ProviderKey
        fields = ("project", "provider", "label")

    def save(self, commit: bool = True) -> Any:
        instance = super().save(commit=False)
        secret = self.cleaned_data.get("secret")
        if secret:
            for name, value in provider_key_secret_fields(secret).items():
                setattr(instance, name, value)
        if commit:
            instance.save()
        return instance


@admin.register(ProviderKey)
class ProviderKeyAdmin(admin.ModelAdmin):
    form = ProviderKeyForm
    list_display = ("project", "provider", "label", "last4", "created_at")


# Routing policies: routing registers the admin; the guardrails field is validated here, by billing, because
# routing does not import billing (the composition root wires the two). The portal's policy editor comes later.
from billing.guardrails import GuardrailConfigError, guardrail_config_parse  # noqa: E402
from routing.admin import RoutingPolicyAdmin  # noqa: E402
from routing.models import RoutingPolicy  # noqa: E402


class RoutingPolicyForm(forms.ModelForm):
    class Meta:
        model = RoutingPolicy
        fields = "__all__"
        help_texts = {"guardrails": 'Guardrail checks (docs/billing.md): {"input": [{"check": "pii", "action": '
                                    '"redact", "price_micros": 50}], "output": [...], "blocklist": [...]}'}

    def clean_guardrails(self) -> Any:
        """Refuse a configuration billing cannot parse, listing every problem with its place."""
        value = self.cleaned_data.get("guardrails") or {}
        if value:
            try:
                guardrail_config_parse(value)
            except GuardrailConfigError as exc:
                raise forms.ValidationError(exc.errors) from exc
        return value


class GuardedRoutingPolicyAdmin(RoutingPolicyAdmin):
    form = RoutingPolicyForm


admin.site.unregister(RoutingPolicy)
admin.site.register(RoutingPolicy, GuardedRoutingPolicyAdmin)
