"""One RequestLog per request that reached the gateway, and one RoutingDecision per routed request."""

from __future__ import annotations

from django.db import models


class RequestLog(models.Model):
    request_id = models.CharField(max_length=40, unique=True)
    organization_id = models.BigIntegerField(null=True)  # indexed first in every index below
    project_id = models.BigIntegerField(null=True)
    api_key_id = models.BigIntegerField(null=True)
    created_at = models.DateTimeField(db_index=True)
    model_requested = models.CharField(max_length=160, blank=True, default="")
    model_served = models.CharField(max_length=160, blank=True, default="")
    route_served = models.CharField(max_length=240, blank=True, default="")
    stream = models.BooleanField(default=False)
    status_code = models.PositiveSmallIntegerField()
    final_disposition = models.CharField(max_length=40)
    error_code = models.CharField(max_length=64, blank=True, default="")
    finish_reason = models.CharField(max_length=32, blank=True, default="")
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    reasoning_tokens = models.PositiveIntegerField(null=True)
    cost_micros = models.BigIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    ttft_ms = models.PositiveIntegerField(null=True)
    attempts = models.JSONField(default=list)
    dropped_params = models.JSONField(default=list)
    client_disconnected = models.BooleanField(default=False)
    # Copied from the decision so that Logs can filter on them without a join.
    task = models.CharField(max_length=32, blank=True, default="")
    complexity = models.CharField(max_length=16, blank=True, default="")
    thinking = models.CharField(max_length=8, blank=True, default="", help_text="on, off, or empty when not known")
    cached_tokens = models.PositiveIntegerField(null=True)
    structured_output_repair = models.JSONField(null=True)
    requested = models.JSONField(default=dict, help_text="What the request asked of routing: its routing object, "
                                                         "extended_thinking and max_tokens, as sent.")
    # billing.pricing.CostBreakdown.as_dict(): price lines per billed attempt, checks, markup, waivers.
    cost_breakdown = models.JSONField(default=dict)
    # billing.guardrails.CheckResult.as_dict() per check run (never the matched text).
    guardrails = models.JSONField(default=list)

    class Meta:
        # Logs lists an organization's rows newest first, by (created_at, id) for keyset pages, and filters on
        # one column at a time: an index per filter that is selective, each ending in the list's order, so a page
        # is a short index range scan at any depth. Streamed, thinking and complexity take a few values each
        # and are filtered while walking log_org_newest (docs/benchmarks.md measures each).
        indexes = [
            models.Index(fields=["organization_id", "-created_at", "-id"], name="log_org_newest"),
            models.Index(fields=["organization_id", "project_id", "-created_at", "-id"], name="log_org_project"),
            models.Index(fields=["organization_id", "api_key_id", "-created_at", "-id"], name="log_org_key"),
            models.Index(fields=["organization_id", "model_served", "-created_at", "-id"], name="log_org_model"),
            models.Index(fields=["organization_id", "task", "-created_at", "-id"], name="log_org_task"),
            models.Index(fields=["organization_id", "final_disposition", "-created_at", "-id"],
                         name="log_org_disposition"),
            models.Index(fields=["organization_id", "status_code", "-created_at", "-id"], name="log_org_status"),
        ]


class RoutingDecision(models.Model):
    request_id = models.CharField(max_length=40, unique=True)
    organization_id = models.BigIntegerField(null=True, db_index=True)
    created_at = models.DateTimeField()
    routing_mode = models.CharField(max_length=16)
    classifier_task_family = models.CharField(max_length=32, null=True)
    complexity_band = models.CharField(max_length=16, null=True)
    eligibility_pool_size = models.PositiveIntegerField(default=0)
    final_disposition = models.CharField(max_length=40)
    decisiveness = models.FloatField(null=True)
    forced_single = models.BooleanField(default=False)
    chain_attempted = models.JSONField(default=list)
    route_displays = models.JSONField(default=dict)
    filter_trail = models.JSONField(default=list)
    filter_trail_text = models.JSONField(default=list)
    routing = models.JSONField(default=dict, help_text="The routing object as the client saw it.")
    attempts = models.JSONField(default=list)
