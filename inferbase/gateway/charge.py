"""Charge one request: every upstream call the provider billed, priced once by billing for the key's organization."""

from __future__ import annotations

from typing import Any

from billing.pricing import BilledAttempt, CostBreakdown, Price, UsageCounts, cost_breakdown
from routing.decision import ChainLink

from .exchange import Exchange

USAGE_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details")


def usage_from(upstream: dict[str, Any] | None, completion_text: str, prompt_tokens_estimate: int) -> dict[str, Any]:
    """Return the upstream's usage, or an estimate (marked `estimated`) when it sent none."""
    if upstream and "prompt_tokens" in upstream:
        usage = {k: upstream[k] for k in USAGE_FIELDS if upstream.get(k) is not None}
        usage.setdefault("total_tokens", int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0)))
        return usage
    completion = max(1, len(completion_text) // 4) if completion_text else 0
    return {"prompt_tokens": prompt_tokens_estimate, "completion_tokens": completion,
            "total_tokens": prompt_tokens_estimate + completion, "estimated": True}


def usage_counts(usage: dict[str, Any]) -> UsageCounts:
    """Return an OpenAI usage object's tokens as billing counts them."""
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    reasoning = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0
    return UsageCounts(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0),
                       int(cached), int(reasoning))


def billed_attempt(link: ChainLink, usage: dict[str, Any], reason: str) -> BilledAttempt:
    """Return one billed upstream call on `link` (served, reask or failed_billed) at the route's integer prices."""
    route = link.route
    return BilledAttempt(usage_counts(usage), Price(route.input_micros_per_mtok, route.output_micros_per_mtok,
                                                    route.cached_input_micros_per_mtok),
                         own_key=link.own_key, route=route.route_id, model=link.model.id, reason=reason)


def bill_failed(ex: Exchange, link: ChainLink, upstream_usage: dict[str, Any] | None) -> None:
    """Bill a failed attempt when its upstream reported usage (it charged for it); one without usage costs nothing."""
    if upstream_usage and "prompt_tokens" in upstream_usage:
        ex.billed.append(billed_attempt(link, upstream_usage, "failed_billed"))


def charge(ex: Exchange) -> CostBreakdown:
    """Price the request once: every billed attempt and guardrail check, the key's plan and markup (docs/billing.md)."""
    assert ex.key is not None
    ex.breakdown = cost_breakdown(ex.billed, plan=ex.key.plan, markup_bps=ex.key.markup_bps,
                                  guardrails=ex.guardrail_charges)
    return ex.breakdown


def usage_with_reasks(usage: dict[str, Any], billed: list[BilledAttempt]) -> dict[str, Any]:
    """Return the usage the client is shown: the served call's plus its re-asks' (billed too)."""
    reasks = [b.usage for b in billed if b.reason == "reask"]
    if not reasks:
        return usage
    prompt = int(usage.get("prompt_tokens") or 0) + sum(u.prompt_tokens for u in reasks)
    completion = int(usage.get("completion_tokens") or 0) + sum(u.completion_tokens for u in reasks)
    return {**usage, "prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
