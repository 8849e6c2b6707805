"""Budgets and rate limits in the Django admin, until the portal's budget page exists."""

from __future__ import annotations

from django.contrib import admin

from .models import Budget, RateLimit


@admin.register(Budget)
class BudgetAdmin(admin.ModelAdmin):
    list_display = ("scope", "scope_id", "monthly_micros", "alert_percent", "updated_at")
    list_filter = ("scope",)


@admin.register(RateLimit)
class RateLimitAdmin(admin.ModelAdmin):
    list_display = ("scope", "scope_id", "requests_per_minute", "tokens_per_minute", "updated_at")
    list_filter = ("scope",)
