from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "inferbase.accounts"
    label = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from billing.models import Budget, RateLimit
        from routing.signals import connect_snapshot_signals

        from .models import ApiKey, Organization, Project, ProviderKey

        # Keys are cached per snapshot version, so a revocation is seen on the next check; budgets and rate
        # limits are loaded with the snapshot, so an edit reaches every process the same way.
        connect_snapshot_signals(ApiKey, Organization, Project, ProviderKey, Budget, RateLimit)
