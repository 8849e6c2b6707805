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
    released = models.DateField(null=True, blank=True, help_text="release month (its first day); GET /models shows "
                                                                 "it as created")
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
    """One benchmark figure for a model and task, with where it is published and as of when.

    A score with no source URL is unverified: it may rank a model, but a decision never calls it measured."""

    model = models.ForeignKey(Model, on_delete=models.CASCADE, related_name="benchmarks")
    task = models.CharField(max_length=32)  # a task family, or "overall"
    score = models.FloatField()
    source = models.CharField(max_length=128, blank=True, default="", help_text="The feed's key for the source.")
    source_title = models.CharField(max_length=256, blank=True, default="",
                                    help_text="The benchmark's name and version.")
    source_url = models.URLField(max_length=500, blank=True, default="", help_text="Where the figure is published.")
    as_of = models.CharField(max_length=10, blank=True, default="", help_text="YYYY-MM or YYYY-MM-DD")
    feed_version = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["model", "task"], name="benchmark_model_task_unique")]

    @property
    def verified(self) -> bool:
        return bool(self.source_url)


class BenchmarkFeedLoad(models.Model):
    """One attempt to load a benchmark feed: applied whole, or rejected with what was wrong (the history)."""

    feed = models.CharField(max_length=500, help_text="The file path or URL the feed was read from.")
    version = models.CharField(max_length=64, blank=True, default="")
    as_of = models.CharField(max_length=10, blank=True, default="")
    applied = models.BooleanField(default=False)
    errors = models.JSONField(default=list, blank=True)
    scores = models.PositiveIntegerField(default=0)
    unverified = models.PositiveIntegerField(default=0, help_text="Scores in the feed without a source.")
    content = models.JSONField(default=dict, blank=True, help_text="The feed as loaded (applied feeds only).")
    loaded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-loaded_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.feed} {self.version} ({'applied' if self.applied else 'rejected'})"


class RouteSample(models.Model):
    """One attempt on a route, as the log writer saw it: the raw material of latency and failure evidence."""

    route_id = models.CharField(max_length=240)  # "<provider>/<catalog id>", as in decisions
    created_at = models.DateTimeField()
    outcome = models.CharField(max_length=16)  # served | truncated | error | timeout
    stream = models.BooleanField(default=False)
    first_token_ms = models.PositiveIntegerField(null=True)
    first_answer_token_ms = models.PositiveIntegerField(null=True)
    end_to_end_ms = models.PositiveIntegerField()
    output_tokens = models.PositiveIntegerField(null=True)

    class Meta:
        indexes = [models.Index(fields=["route_id", "-created_at"], name="sample_route_created"),
                   models.Index(fields=["created_at"], name="sample_created")]


class RouteEvidence(models.Model):
    """A route's figures over the recent window, aggregated from its samples by the evidence task."""

    route_id = models.CharField(max_length=240, unique=True)
    window = models.CharField(max_length=64)  # e.g. "last 3600 s, at most 500 samples"
    samples = models.PositiveIntegerField(default=0)  # served attempts with timings
    first_token_ms_p50 = models.PositiveIntegerField(null=True)
    first_token_ms_p90 = models.PositiveIntegerField(null=True)
    first_answer_token_ms_p50 = models.PositiveIntegerField(null=True)
    first_answer_token_ms_p90 = models.PositiveIntegerField(null=True)
    end_to_end_ms_p50 = models.PositiveIntegerField(null=True)
    end_to_end_ms_p90 = models.PositiveIntegerField(null=True)
    output_tokens_per_s = models.FloatField(null=True)
    failure_samples = models.PositiveIntegerField(default=0)  # every attempt counted in the rates
    error_rate = models.FloatField(default=0.0)
    timeout_rate = models.FloatField(default=0.0)
    truncation_rate = models.FloatField(default=0.0)
    cooldown_started = models.DateTimeField(null=True, blank=True)
    cooldown_until = models.DateTimeField(null=True, blank=True)
    cooldown_reason = models.CharField(max_length=200, blank=True, default="")
    updated_at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "route evidence"

    def __str__(self) -> str:
        return self.route_id


class RouteLatency(models.Model):
    """The catalog's prior for a route's latency, used until traffic has measured it."""

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
    # Guardrail checks on input and output ({"input": [...], "output": [...], "blocklist": [...]}, docs/billing.md);
    # validated and compiled by billing in the composition root (routing does not import billing).
    guardrails = models.JSONField(default=dict, blank=True)
    explore_unmeasured = models.BooleanField(
        default=False, help_text="Send a small share of auto traffic to eligible models without latency samples.")
    admit_unmeasured = models.BooleanField(
        default=False, help_text="Models of the pool without benchmark scores pass the quality floor (none for them).")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["organization", "name"], name="policy_org_name_unique")]
        verbose_name_plural = "routing policies"

    def __str__(self) -> str:
        return self.name


class PolicyVersion(models.Model):
    """One saved state of a routing policy: every change is a new version, numbered from 1, with who made it
    and the policy's whole field snapshot (routing.policies.POLICY_FIELDS), so two versions diff and any can
    be restored."""

    policy = models.ForeignKey(RoutingPolicy, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    author = models.CharField(max_length=150, blank=True, default="", help_text="The username that saved it.")
    created_at = models.DateTimeField(auto_now_add=True)
    fields = models.JSONField(default=dict)
    note = models.CharField(max_length=200, blank=True, default="", help_text="e.g. restored from version 3")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["policy", "number"], name="policy_version_unique")]
        ordering = ["-number"]

    def __str__(self) -> str:
        return f"{self.policy_id} v{self.number}"
