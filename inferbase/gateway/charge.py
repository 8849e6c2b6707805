"""Charge one request: its usage (the upstream's, else estimated) priced by billing for the key's organization."""

from __future__ import annotations

from typing import Any

from billing.pricing import Charging, RoutePrice, UsageCounts, charge_multiplier, cost_micros
from inferbase.accounts.selectors import KeyInfo
from routing.decision import ChainLink

USAGE_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details")


def cost_multiplier(key: KeyInfo) -> float:
    """Return what the key's organization pays per micro-dollar of list price (routing's cost ceilings use it)."""
    return charge_multiplier(plan=key.plan, markup_bps=key.markup_bps)


def usage_from(upstream: dict[str, Any] | None, completion_text: str, prompt_tokens_estimate: int) -> dict[str, Any]:
    """Return the upstream's usage, or an estimate (marked `estimated`) when it sent none."""
    if upstream and "prompt_tokens" in upstream:
        usage = {k: upstream[k] for k in USAGE_FIELDS if upstream.get(k) is not None}
        usage.setdefault("total_tokens", int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0)))
        return usage
    completion = max(1, len(completion_text) // 4) if completion_text else 0
    return {"prompt_tokens": prompt_tokens_estimate, "completion_tokens": completion,
            "total_tokens": prompt_tokens_estimate + completion, "estimated": True}


def charge(key: KeyInfo, link: ChainLink, usage: dict[str, Any]) -> int:
    """Return what the usage on this link costs the key's organization, in micro-dollars."""
    cached = ((usage.get("prompt_tokens_details") or {}).get("cached_tokens")) or 0
    counts = UsageCounts(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0), int(cached))
    price = RoutePrice(link.route.price_input, link.route.price_output, link.route.price_cached_input)
    return cost_micros(counts, price, Charging(plan=key.plan, markup_bps=key.markup_bps, own_provider_key=link.own_key))
