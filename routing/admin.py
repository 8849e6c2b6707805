from django.contrib import admin

from .models import (
    BenchmarkFeedLoad,
    BenchmarkScore,
    Model,
    Route,
    RouteEvidence,
    RouteLatency,
    RoutingPolicy,
)


class RouteInline(admin.TabularInline):
    model = Route
    extra = 0


@admin.register(Model)
class ModelAdmin(admin.ModelAdmin):
    list_display = ("catalog_id", "name", "reasoning", "supports_tools", "verified_structured_output", "enabled")
    search_fields = ("catalog_id", "name")
    inlines = [RouteInline]


@admin.register(Route)
class RouteAdmin(admin.ModelAdmin):
    list_display = ("model", "provider", "upstream_model", "price_input", "price_output", "context_window",
                    "thinking_switch", "enabled")
    list_filter = ("provider",)


@admin.register(RoutingPolicy)
class RoutingPolicyAdmin(admin.ModelAdmin):
    list_display = ("name", "organization", "objective", "quality_floor", "chain_length", "max_cost_micros",
                    "explore_unmeasured", "admit_unmeasured")


@admin.register(BenchmarkScore)
class BenchmarkScoreAdmin(admin.ModelAdmin):
    list_display = ("model", "task", "score", "source_title", "as_of", "verified", "feed_version")
    list_filter = ("task", "source")
    search_fields = ("model__catalog_id",)

    @admin.display(boolean=True)
    def verified(self, obj: BenchmarkScore) -> bool:
        return obj.verified


class ReadOnlyAdmin(admin.ModelAdmin):
    """Written by the periodic tasks only."""

    def has_add_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False

    def has_change_permission(self, request, obj=None):  # type: ignore[no-untyped-def]
        return False


@admin.register(BenchmarkFeedLoad)
class BenchmarkFeedLoadAdmin(ReadOnlyAdmin):
    list_display = ("loaded_at", "feed", "version", "as_of", "applied", "scores", "unverified", "first_error")
    list_filter = ("applied",)
    exclude = ("content",)

    @admin.display(description="why rejected")
    def first_error(self, obj: BenchmarkFeedLoad) -> str:
        return "" if obj.applied or not obj.errors else f"{obj.errors[0]} ({len(obj.errors)} in all)"


@admin.register(RouteEvidence)
class RouteEvidenceAdmin(ReadOnlyAdmin):
    list_display = ("route_id", "samples", "first_token_ms_p50", "first_token_ms_p90", "end_to_end_ms_p50",
                    "output_tokens_per_s", "error_rate", "timeout_rate", "cooldown_until", "updated_at")
    search_fields = ("route_id",)


admin.site.register(RouteLatency)
