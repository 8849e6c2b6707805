from django.contrib import admin

from .models import BenchmarkScore, Model, Route, RouteLatency, RoutingPolicy


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
    list_display = ("name", "organization", "objective", "quality_floor", "chain_length", "max_cost_micros")


admin.site.register(BenchmarkScore)
admin.site.register(RouteLatency)
