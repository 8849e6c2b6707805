"""Reads for providers: the latest health probe of each."""

from __future__ import annotations

from datetime import datetime

from .models import ProviderHealth


def provider_health_latest(*, slugs: list[str]) -> dict[str, tuple[str, datetime]]:
    """Return provider slug -> (status, checked_at) of its latest probe, for those probed at all."""
    rows = ProviderHealth.objects.filter(provider__slug__in=slugs).values_list("provider__slug", "status", "checked_at")
    return {slug: (status, checked_at) for slug, status, checked_at in rows}
