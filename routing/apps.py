from django.apps import AppConfig


class RoutingConfig(AppConfig):
    name = "routing"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from providers.models import Provider, ProviderHealth

        from .models import BenchmarkScore, Model, Route, RouteLatency, RoutingPolicy
        from .signals import connect_snapshot_signals

        # ProviderHealth is saved only when a provider's status changes (the probes move checked_at alone).
        connect_snapshot_signals(Provider, ProviderHealth, Model, Route, BenchmarkScore, RouteLatency, RoutingPolicy)
