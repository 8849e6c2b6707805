from django.contrib import admin

from .models import RequestLog, RoutingDecision


@admin.register(RequestLog)
class RequestLogAdmin(admin.ModelAdmin):
    list_display = ("request_id", "created_at", "model_requested", "model_served", "status_code", "final_disposition", "cost_micros", "latency_ms")
    list_filter = ("final_disposition", "stream")
    search_fields = ("request_id",)


@admin.register(RoutingDecision)
class RoutingDecisionAdmin(admin.ModelAdmin):
    list_display = ("request_id", "created_at", "routing_mode", "classifier_task_family", "final_disposition", "decisiveness")
    search_fields = ("request_id",)
