"""The process's budget and rate-limit counters, built from settings (docs/billing.md, "Wiring")."""

from __future__ import annotations

from django.conf import settings

from billing.limits import Limiter, limiter_build

_limiter: Limiter | None = None


def limiter() -> Limiter:
    """Return this process's limiter: Redis counters when REDIS_URL is set, in-process counters otherwise."""
    global _limiter
    if _limiter is None:
        _limiter = limiter_build(redis_url=settings.REDIS_URL, prefix=settings.INFERBASE_CACHE_PREFIX,
                                 fail_open=settings.INFERBASE_LIMITS_FAIL_OPEN,
                                 timeout_s=settings.INFERBASE_LIMITS_TIMEOUT_MS / 1000)
    return _limiter
