from django.apps import AppConfig


class RoutingConfig(AppConfig):
    name = "routing"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from providers.models import Provider

        from .models import BenchmarkScore, Model, Route, RouteLatency, RoutingPolicy
        from .signals import connect_snapshot_signals

        connect_snapshot_signals(Provider, Model, Route, BenchmarkScore, RouteLatency, RoutingPolicy)
