from django.contrib import admin

from .models import Provider


@admin.register(Provider)
class ProviderAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "kind", "dialect", "base_url", "api_key_env", "enabled")
