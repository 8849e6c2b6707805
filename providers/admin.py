from django.contrib import admin

from .models import Provider, ProviderHealth


@admin.register(Provider)
class ProviderAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "kind", "dialect", "base_url", "api_key_env", "enabled")


@admin.register(ProviderHealth)
class ProviderHealthAdmin(admin.ModelAdmin):
    list_display = ("provider", "status", "http_status", "detail", "checked_at", "changed_at")

    def has_add_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False

    def has_change_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False
