"""URLs served by Django (chat completions is routed to its consumer in asgi.py, ahead of these)."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path, re_path

from inferbase.api import views
from inferbase.metrics import metrics_view
from inferbase.views import landing_view

api_patterns = [
    path("openapi.json", views.openapi_view, name="openapi"),
    path("models", views.models_view, name="models"),
    re_path(r"^models/(?P<model_id>[^/]+(?:/[^/]+)?)/health$", views.model_health_view, name="model-health"),
    re_path(r"^models/(?P<model_id>[^/]+(?:/[^/]+)?)$", views.model_retrieve_view, name="model"),
    path("routing-decisions/<str:request_id>", views.RoutingDecisionView.as_view(), name="routing-decision"),
    path("usage", views.UsageView.as_view(), name="usage"),
    re_path(r"^(?P<path>.*)$", views.not_found_view),
]

urlpatterns = [
    path("", landing_view, name="landing"),
    path("openapi.json", views.openapi_view, name="openapi"),
    path("metrics", metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    path("portal/", include("inferbase.portal.urls")),
    path("api/v1/inference/", include((api_patterns, "api"), namespace="inference")),
    path("api/v1/", include((api_patterns, "api"), namespace="v1")),
]
