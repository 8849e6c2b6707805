"""Celery tasks that refresh providers' data: the scheduled health probes."""

from __future__ import annotations

from celery import shared_task

from .services import provider_health_probe as _provider_health_probe


@shared_task(name="providers.tasks.provider_health_probe")
def provider_health_probe() -> dict[str, list[str]]:
    """Probe each servable provider's API once; routing sees a change of status."""
    return _provider_health_probe()
