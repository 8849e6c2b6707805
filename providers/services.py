"""Writes for providers: the health probes' results."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from django.conf import settings

from .credentials import env_credential
from .health import ProbeResult, ProbeTarget, probe_all, simulated_base_url
from .models import Provider, ProviderHealth


def probe_targets() -> list[ProbeTarget]:
    """Return a target per enabled provider that can serve: simulated ones (when on), and real ones whose
    credential is in the environment (or that need none); others would only be refused."""
    targets = []
    for provider in Provider.objects.filter(enabled=True).order_by("slug"):
        if provider.kind == Provider.Kind.SIMULATED:
            if settings.INFERBASE_SIMULATED_ROUTES:
                targets.append(ProbeTarget(provider.slug, simulated_base_url(provider.dialect), provider.dialect, None))
            continue
        key = env_credential(provider.api_key_env)
        if provider.base_url and (key or not provider.api_key_env):
            targets.append(ProbeTarget(provider.slug, provider.base_url.rstrip("/"), provider.dialect, key))
    return targets


def provider_health_record(results: list[ProbeResult], *, now: datetime | None = None) -> list[str]:
    """Store probe results; return the providers whose status changed (their rows are saved, which routing
    notices; an unchanged status only moves `checked_at`)."""
    now = now or datetime.now(UTC)
    ids = dict(Provider.objects.filter(slug__in=[r.provider for r in results]).values_list("slug", "pk"))
    existing = {row.provider_id: row for row in ProviderHealth.objects.filter(provider_id__in=ids.values())}
    changed = []
    for result in results:
        status = ProviderHealth.Status.READY if result.ok else ProviderHealth.Status.LOADING
        row = existing.get(ids[result.provider])
        if row is None or row.status != status:
            ProviderHealth.objects.update_or_create(provider_id=ids[result.provider], defaults={
                "status": status, "http_status": result.http_status, "detail": result.detail, "checked_at": now,
                "changed_at": now})
            changed.append(result.provider)
        else:
            ProviderHealth.objects.filter(pk=row.pk).update(http_status=result.http_status, detail=result.detail,
                                                            checked_at=now)
    return changed


def provider_health_probe() -> dict[str, list[str]]:
    """Probe every servable provider once (GET {base}/models) and store the results."""
    results = asyncio.run(probe_all(probe_targets(), float(settings.INFERBASE_HEALTH_PROBE_TIMEOUT_SECONDS)))
    changed = provider_health_record(results)
    return {"probed": [r.provider for r in results], "down": [r.provider for r in results if not r.ok],
            "changed": changed}
