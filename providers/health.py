"""Liveness probes of providers' APIs: one GET of the model list, which warms nothing and is never billed."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httpx
from django.conf import settings


@dataclass(frozen=True, slots=True)
class ProbeTarget:
    provider: str  # slug
    base_url: str
    dialect: str
    api_key: str | None


@dataclass(frozen=True, slots=True)
class ProbeResult:
    provider: str
    ok: bool
    http_status: int | None
    detail: str


def simulated_base_url(dialect: str) -> str:
    """Return the simulated upstream's API root for a wire dialect."""
    return f"{settings.INFERBASE_SIMULATED_URL}/{'anthropic' if dialect == 'anthropic' else 'openai'}/v1"


def auth_headers(dialect: str, api_key: str | None) -> dict[str, str]:
    if not api_key:
        return {}
    if dialect == "anthropic":
        return {"x-api-key": api_key, "anthropic-version": "2023-06-01"}
    return {"authorization": f"Bearer {api_key}"}


async def probe(client: httpx.AsyncClient, target: ProbeTarget, limit_s: float) -> ProbeResult:
    """Return whether the provider's API answers (any status below 500) to a GET of its model list."""
    try:
        async with asyncio.timeout(limit_s):
            response = await client.get(f"{target.base_url}/models", headers=auth_headers(target.dialect, target.api_key))
    except TimeoutError:
        return ProbeResult(target.provider, False, None, f"no answer within {limit_s:g} s")
    except httpx.HTTPError as exc:
        return ProbeResult(target.provider, False, None, f"{type(exc).__name__}: {exc}"[:300])
    ok = response.status_code < 500
    return ProbeResult(target.provider, ok, response.status_code, "" if ok else f"HTTP {response.status_code}")


async def probe_all(targets: list[ProbeTarget], limit_s: float) -> list[ProbeResult]:
    """Probe every target at once, over one client; one probe each."""
    async with httpx.AsyncClient(follow_redirects=False) as client:
        return list(await asyncio.gather(*(probe(client, target, limit_s) for target in targets)))
