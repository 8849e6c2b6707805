"""Budgets and rate limits per scope (organization, project, key), and the usage rollups behind GET /usage.

Scopes are plain ids, as the logs keep them: billing imports none of the account models.
"""

from __future__ import annotations

from django.db import models


class Scope(models.TextChoices):
    ORGANIZATION = "organization"
    PROJECT = "project"
    KEY = "key"


class Budget(models.Model):
    """A monthly spend budget (calendar month, UTC) for one organization, project or API key."""

    scope = models.CharField(max_length=16, choices=Scope.choices)
    scope_id = models.BigIntegerField()
    monthly_micros = models.BigIntegerField(help_text="Micro-dollars per calendar month (UTC); $50 = 50000000.")
    alert_percent = models.PositiveSmallIntegerField(default=80, help_text="Shown as an alert from this share spent.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scope", "scope_id"], name="budget_scope_unique"),
            models.CheckConstraint(condition=models.Q(monthly_micros__gte=0), name="budget_micros_not_negative"),
            models.CheckConstraint(condition=models.Q(alert_percent__gte=1, alert_percent__lte=100),
                                   name="budget_alert_percent_range"),
        ]

    def __str__(self) -> str:
        return f"{self.scope} {self.scope_id}: {self.monthly_micros} micros/month"


class RateLimit(models.Model):
    """Requests and tokens per minute for one organization, project or API key (empty: no limit of that kind)."""

    scope = models.CharField(max_length=16, choices=Scope.choices)
    scope_id = models.BigIntegerField()
    requests_per_minute = models.PositiveIntegerField(null=True, blank=True)
    tokens_per_minute = models.PositiveBigIntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scope", "scope_id"], name="rate_limit_scope_unique"),
            models.CheckConstraint(condition=models.Q(requests_per_minute__isnull=True) | models.Q(requests_per_minute__gte=1),
                                   name="rate_limit_rpm_positive"),
            models.CheckConstraint(condition=models.Q(tokens_per_minute__isnull=True) | models.Q(tokens_per_minute__gte=1),
                                   name="rate_limit_tpm_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.scope} {self.scope_id}: {self.requests_per_minute} rpm, {self.tokens_per_minute} tpm"


class UsageRollup(models.Model):
    """Requests, tokens and cost per day × organization × project × key × model, kept by the log writer.

    0 stands for no project or key, "" for no model (a request refused before a model was chosen), so that
    the unique key has no NULLs and one upsert adds to one row."""

    day = models.DateField()
    organization_id = models.BigIntegerField()
    project_id = models.BigIntegerField(default=0)
    api_key_id = models.BigIntegerField(default=0)
    model = models.CharField(max_length=160, default="", blank=True)
    requests = models.BigIntegerField(default=0)
    prompt_tokens = models.BigIntegerField(default=0)
    completion_tokens = models.BigIntegerField(default=0)
    reasoning_tokens = models.BigIntegerField(default=0)
    cost_micros = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            # Its index (organization, day first) also serves every /usage query.
            models.UniqueConstraint(fields=["organization_id", "day", "project_id", "api_key_id", "model"],
                                    name="usage_rollup_unique"),
        ]
