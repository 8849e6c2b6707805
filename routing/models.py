"""Catalog (models, routes), evidence (benchmarks, route latency) and routing policies."""

from __future__ import annotations

from django.db import models

from providers.base import NO_THINKING_SWITCH, THINKING_SWITCHES
from providers.models import Provider


class Model(models.Model):
    class Reasoning(models.TextChoices):
        NONE = "none"
        SWITCHABLE = "switchable"
        ALWAYS_ON = "always_on"
        UNKNOWN = "unknown"  # not measured yet (a model added with add_provider that declared none)

    catalog_id = models.CharField(max_length=128, unique=True, help_text="slug, or slug:variant")
    base_id = models.CharField(max_length=128, db_index=True)
    variant_label = models.CharField(max_length=64, blank=True, default="")
    name = models.CharField(max_length=128)
    author = models.CharField(max_length=64, blank=True, default="")
    supports_tools = models.BooleanField(default=False)
    verified_structured_output = models.BooleanField(default=False)
    supports_vision = models.BooleanField(default=False)
    reasoning = models.CharField(max_length=16, choices=Reasoning.choices, default=Reasoning.NONE)
    typical_reasoning_tokens = models.PositiveIntegerField(default=0)
    slow_tier = models.BooleanField(default=False)
    simulation = models.JSONField(default=dict, blank=True)
    enabled = models.BooleanField(default=True)
    from_catalog = models.BooleanField(default=False)

    def __str__(self) -> str:
        return self.catalog_id


class Route(models.Model):
    """A model served by a provider. Prices are USD per million tokens (= micro-dollars per token)."""

    model = models.ForeignKey(Model, on_delete=models.CASCADE, related_name="routes")
    provider = models.ForeignKey(Provider, on_delete=models.CASCADE, related_name="routes")
    upstream_model = models.CharField(max_length=256)
    price_input = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    price_output = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    price_cached_input = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    context_window = models.PositiveIntegerField(default=8192)
    max_output_tokens = models.PositiveIntegerField(default=4096)
    thinking_switch = models.CharField(
        max_length=24, choices=[(s, s) for s in THINKING_SWITCHES], default=NO_THINKING_SWITCH,
        help_text="How this OpenAI-compatible route turns a switchable model's thinking on and off; "
                  "none sends nothing, and the model runs its default. Anthropic routes use their own.")
    enabled = models.BooleanField(default=True)
    from_catalog = models.BooleanField(default=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["model", "provider"], name="route_model_provider_unique")]

    @property
    def route_id(self) -> str:
        return f"{self.provider.slug}/{self.model.catalog_id}"

    def __str__(self) -> str:
        return f"{self.provider_id}/{self.model_id}"


class BenchmarkScore(models.Model):
    model = models.ForeignKey(Model, on_delete=models.CASCADE, related_name="benchmarks")
    task = models.CharField(max_length=32)  # a task family, or "overall"
    score = models.FloatField()
    source = models.CharField(max_length=128, blank=True, default="")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["model", "task"], name="benchmark_model_task_unique")]


class RouteLatency(models.Model):
    route = models.OneToOneField(Route, on_delete=models.CASCADE, related_name="latency")
    ttft_ms_p50 = models.PositiveIntegerField()
    ttft_ms_p90 = models.PositiveIntegerField(null=True, blank=True)
    tokens_per_second = models.FloatField()
    samples = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)


class RoutingPolicy(models.Model):
    """The routing rules a key runs under (key, else project, else organization, else Inferbase)."""

    class Objective(models.TextChoices):
        QUALITY = "quality"
        COST = "cost"
        LATENCY = "latency"
        BALANCED = "balanced"

    class QualityFloor(models.TextChoices):
        NONE = "none"
        BASIC = "basic"
        STANDARD = "standard"
        STRICT = "strict"

    organization = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="routing_policies", null=True, blank=True
    )
    name = models.CharField(max_length=128)
    pool = models.JSONField(default=list, blank=True, help_text="Catalog ids; empty means the whole catalog.")
    allow_variants = models.BooleanField(default=True)
    objective = models.CharField(max_length=16, choices=Objective.choices, default=Objective.BALANCED)
    quality_floor = models.CharField(max_length=16, choices=QualityFloor.choices, default=QualityFloor.STANDARD)
    quality_floor_by_task = models.JSONField(default=dict, blank=True, help_text="task -> preset, overrides quality_floor")
    require_pinned_in_pool = models.BooleanField(default=False)
    allowed_providers = models.JSONField(default=list, blank=True, help_text="Provider slugs; empty means all.")
    data_regions = models.JSONField(default=list, blank=True, help_text="Allowed provider data regions; empty means all.")
    first_token_timeout_ms = models.PositiveIntegerField(default=15_000)
    total_deadline_ms = models.PositiveIntegerField(default=60_000)
    chain_length = models.PositiveSmallIntegerField(default=4)
    max_cost_micros = models.PositiveBigIntegerField(null=True, blank=True)
    structured_output_extraction = models.BooleanField(default=True)
    structured_output_reask = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "name"], name="policy_org_name_unique")]
        verbose_name_plural = "routing policies"

    def __str__(self) -> str:
        return self.name
