"""The Provider row: an upstream API that serves routes."""

from __future__ import annotations

from django.db import models


class Provider(models.Model):
    class Kind(models.TextChoices):
        OPENAI_COMPATIBLE = "openai-compatible"
        ANTHROPIC = "anthropic"
        SIMULATED = "simulated"

    class Dialect(models.TextChoices):
        OPENAI = "openai"
        ANTHROPIC = "anthropic"

    class PromptCaching(models.TextChoices):
        AUTOMATIC = "automatic"
        EXPLICIT = "explicit"
        NONE = "none"

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=128)
    kind = models.CharField(max_length=32, choices=Kind.choices)
    dialect = models.CharField(max_length=16, choices=Dialect.choices, default=Dialect.OPENAI)
    # Empty for simulated providers: their address comes from settings.INFERBASE_SIMULATED_URL.
    base_url = models.URLField(max_length=512, blank=True, default="")
    api_key_env = models.CharField(max_length=128, blank=True, default="", help_text="Environment variable holding the credential.")
    prompt_caching = models.CharField(max_length=16, choices=PromptCaching.choices, default=PromptCaching.NONE)
    data_regions = models.JSONField(default=list, blank=True)
    enabled = models.BooleanField(default=True)
    from_catalog = models.BooleanField(default=False, help_text="Managed by the shipped catalog file.")

    def __str__(self) -> str:
        return self.slug


class ProviderHealth(models.Model):
    """The latest liveness probe of a provider's API (GET {base}/models): warms no model, costs nothing.

    Saved (and so noticed by routing) only when the status changes; each probe updates `checked_at`."""

    class Status(models.TextChoices):
        READY = "ready"
        LOADING = "loading"  # the provider's API is not answering

    provider = models.OneToOneField(Provider, on_delete=models.CASCADE, related_name="health")
    status = models.CharField(max_length=16, choices=Status.choices)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    detail = models.CharField(max_length=300, blank=True, default="")
    checked_at = models.DateTimeField()
    changed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.provider_id}: {self.status}"
