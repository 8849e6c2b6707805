"""Logs and decisions in the admin: records of what happened, shown and never edited."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest
from django.utils.html import format_html
from django.utils.safestring import SafeString

from .models import RequestLog, RoutingDecision


def json_block(value: Any) -> SafeString:
    """Render a JSON column for reading: a list of sentences one per line, anything else indented."""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        text = "\n".join(value)
    else:
        text = json.dumps(value, indent=2, ensure_ascii=False)
    return format_html('<pre style="white-space: pre-wrap; margin: 0">{}</pre>', text)


def _json_field(name: str) -> Callable[[Any, Model], SafeString]:
    @admin.display(description=name.replace("_", " "))
    def show(self: Any, obj: Model) -> SafeString:
        return json_block(getattr(obj, name))

    return show


class RecordAdmin(admin.ModelAdmin):
    """A record of what happened: viewable by staff with the view permission; added, changed or deleted never."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(RequestLog)
class RequestLogAdmin(RecordAdmin):
    list_display = ("request_id", "created_at", "model_requested", "model_served", "status_code", "final_disposition", "cost_micros", "latency_ms")
    list_filter = ("final_disposition", "stream")
    search_fields = ("request_id",)
    attempts_json = _json_field("attempts")
    dropped_params_json = _json_field("dropped_params")
    fieldsets = (
        (None, {"fields": ("request_id", "created_at", "organization_id", "project_id", "api_key_id")}),
        ("Outcome", {"fields": ("status_code", "final_disposition", "error_code", "client_disconnected",
                                "model_requested", "model_served", "route_served", "stream", "finish_reason")}),
        ("Usage and cost", {"fields": ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cost_micros",
                                       "latency_ms", "ttft_ms", "dropped_params_json")}),
        ("Attempts", {"fields": ("attempts_json",)}),
    )
    readonly_fields = tuple(name for _, options in fieldsets for name in options["fields"])


@admin.register(RoutingDecision)
class RoutingDecisionAdmin(RecordAdmin):
    list_display = ("request_id", "created_at", "routing_mode", "classifier_task_family", "final_disposition", "decisiveness")
    search_fields = ("request_id",)
    filter_trail_text_json = _json_field("filter_trail_text")
    filter_trail_json = _json_field("filter_trail")
    chain_attempted_json = _json_field("chain_attempted")
    attempts_json = _json_field("attempts")
    routing_json = _json_field("routing")
    route_displays_json = _json_field("route_displays")
    fieldsets = (
        (None, {"fields": ("request_id", "created_at", "organization_id", "final_disposition")}),
        ("Why this route", {"fields": ("filter_trail_text_json", "routing_mode", "classifier_task_family",
                                       "complexity_band", "eligibility_pool_size", "decisiveness", "forced_single")}),
        ("Chain and attempts", {"fields": ("chain_attempted_json", "attempts_json")}),
        ("In full", {"fields": ("filter_trail_json", "routing_json", "route_displays_json")}),
    )
    readonly_fields = tuple(name for _, options in fieldsets for name in options["fields"])
