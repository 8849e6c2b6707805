"""Reads for providers: the latest health probe of each, and the providers a project may bring a key for."""

from __future__ import annotations

from datetime import datetime

from .models import Provider, ProviderHealth


def provider_health_latest(*, slugs: list[str]) -> dict[str, tuple[str, datetime]]:
    """Return provider slug -> (status, checked_at) of its latest probe, for those probed at all."""
    rows = ProviderHealth.objects.filter(provider__slug__in=slugs).values_list("provider__slug", "status", "checked_at")
    return {slug: (status, checked_at) for slug, status, checked_at in rows}


def provider_slugs_for_own_keys() -> list[str]:
    """Return the providers a project may bring its own key for (every real one; simulated ones need none)."""
    return list(Provider.objects.exclude(kind="simulated").order_by("slug").values_list("slug", flat=True))


def provider_by_slug(*, slug: str) -> Provider | None:
    return Provider.objects.filter(slug=slug).first()
