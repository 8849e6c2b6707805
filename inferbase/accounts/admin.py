from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin

from .crypto import secret_encrypt
from .models import ApiKey, Organization, Project, ProviderKey


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "plan", "markup_bps", "default_policy")
    filter_horizontal = ("members",)


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "organization", "default_policy")


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ("prefix", "name", "project", "policy", "created_at", "last_used_at", "revoked_at")
    readonly_fields = ("prefix", "key_hash", "created_at", "last_used_at")


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
            instance.encrypted_secret = secret_encrypt(secret)
            instance.last4 = secret[-4:]
        if commit:
            instance.save()
        return instance


@admin.register(ProviderKey)
class ProviderKeyAdmin(admin.ModelAdmin):
    form = ProviderKeyForm
    list_display = ("project", "provider", "label", "last4", "created_at")
