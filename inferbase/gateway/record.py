"""Record one request: its log record and decision go to the recorder (off the response path), and the
decision is copied to the shared cache before the response's last byte, for every process's GET."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from observability.selectors import decision_shown
from routing.decision import ChainLink, RoutingOverrides

from .charge import charge
from .errors import NotRouted
from .exchange import Exchange, Outcome
from .request import ChatRequest

if TYPE_CHECKING:
    from .state import AppState

ROUTING_FIELDS = tuple(f.name for f in fields(RoutingOverrides))
logger = logging.getLogger("inferbase.gateway")

ENDED_UNKNOWN = Outcome("", 0)  # a request recorded before any step ended it (it never is: the consumer ends each)


def requested_of(chat: ChatRequest) -> dict[str, Any]:
    """Return what the request asked of routing, as sent: its routing object, extended_thinking, max_tokens."""
    asked: dict[str, Any] = {}
    # Its fields are scalars and tuples of strings: read as they are (dataclasses.asdict deep-copied each, per request).
    overrides = chat.routing
    routing = {name: value for name in ROUTING_FIELDS if (value := getattr(overrides, name)) is not None}
    if routing:
        asked["routing"] = routing
    if chat.extended_thinking is not None:
        asked["extended_thinking"] = chat.extended_thinking
    if chat.max_tokens is not None:
        asked["max_tokens"] = chat.max_tokens
    return asked


def usage_fields(ex: Exchange) -> dict[str, Any]:
    """Return the fields of the request's log record that Usage counts (the pending set's entry; `record` uses
    them too, so the two agree). Prices a request that was not served (a billed failed attempt, checks that ran)."""
    key = ex.key
    outcome = ex.outcome or ENDED_UNKNOWN
    served = outcome.link
    usage = outcome.usage
    details = usage.get("completion_tokens_details") or {}
    breakdown = ex.breakdown or (charge(ex) if key is not None else None)
    return {
        "request_id": ex.request_id,
        "organization_id": key.organization_id if key else None,
        "project_id": key.project_id if key else None,
        "api_key_id": key.key_id if key else None,
        "created_at": ex.created,
        "model_requested": ex.chat.model if ex.chat else "",
        "model_served": served.model.id if served else "",
        "prompt_tokens": int(usage.get("prompt_tokens") or 0),
        "completion_tokens": int(usage.get("completion_tokens") or 0),
        "reasoning_tokens": details.get("reasoning_tokens"),
        "cost_micros": breakdown.cost_micros if breakdown is not None else 0,
    }


def record(state: AppState, ex: Exchange) -> None:
    """Hand the request's log record (and its decision) to the recorder."""
    outcome = ex.outcome or ENDED_UNKNOWN
    served = outcome.link
    usage = outcome.usage
    attempts = [attempt.as_record() for attempt in ex.attempts]
    counted = usage_fields(ex)  # prices a request that was not served: a failed attempt its upstream billed, checks
    breakdown = ex.breakdown
    routed = ex.routed.routing if ex.routed is not None else {}
    unrouted = outcome.error.classification if isinstance(outcome.error, NotRouted) else None
    log = {
        **counted,
        "route_served": served.route.route_id if served else "",
        "stream": bool(ex.chat and ex.chat.stream),
        "status_code": outcome.status_code,
        "final_disposition": outcome.disposition,
        "error_code": outcome.error_code,
        "finish_reason": outcome.finish_reason,
        "cost_breakdown": breakdown.as_dict() if breakdown is not None else {},
        "guardrails": [result.as_dict() for result in ex.guardrail_results],
        "latency_ms": ex.elapsed_ms(),
        "ttft_ms": ex.ttft_ms,
        "attempts": attempts,
        "dropped_params": list(outcome.dropped_params),
        "client_disconnected": outcome.client_disconnected,
        # Copied from the decision for Logs' filters.
        "task": routed.get("task") or (unrouted.task if unrouted else None) or "",
        "complexity": routed.get("complexity") or (unrouted.complexity if unrouted else None) or "",
        "thinking": routed.get("thinking") or "",
        "cached_tokens": (usage.get("prompt_tokens_details") or {}).get("cached_tokens"),
        "structured_output_repair": outcome.structured_output_repair,
        "requested": requested_of(ex.chat) if ex.chat else {},
    }
    state.recorder.record({"log": log, "decision": decision_entry(ex, attempts)})


def decision_entry(ex: Exchange, attempts: list[dict[str, Any]] | None = None) -> dict[str, Any] | None:
    """Return the request's decision as the log writer stores it (None when nothing was routed)."""
    key = ex.key
    outcome = ex.outcome or ENDED_UNKNOWN
    base = {
        "request_id": ex.request_id,
        "organization_id": key.organization_id if key else None,
        "created_at": ex.created,
    }
    if ex.routed is not None:
        decision = ex.routed.decision
        routing = {k: v for k, v in ex.routed.routing.items() if k != "object"}
        return _decision(
            base, outcome, routing_mode=routing.get("optimize_mode") or decision.policy.objective,
            task=routing.get("task"), complexity=routing.get("complexity"),
            pool_size=decision.eligibility_pool_size, decisiveness=routing.get("decisiveness"),
            forced_single=bool(routing.get("forced_single")), chain=decision.chain, filter_trail=decision.filter_trail,
            filter_trail_text=decision.filter_trail_text, routing=routing,
            attempts=attempts if attempts is not None else [attempt.as_record() for attempt in ex.attempts])
    unrouted = outcome.error
    if isinstance(unrouted, NotRouted) and unrouted.filter_trail:
        classification = unrouted.classification
        # No model passed every eligibility step: an empty pool, no chain, no attempts.
        return _decision(base, outcome, routing_mode=unrouted.routing_mode, task=classification.task,
                         complexity=classification.complexity, filter_trail=unrouted.filter_trail,
                         filter_trail_text=unrouted.filter_trail_text)
    return None


def _decision(base: dict[str, Any], outcome: Outcome, *, routing_mode: str | None, task: str | None,
              complexity: str | None, filter_trail: Sequence[dict[str, Any]], filter_trail_text: Sequence[str],
              pool_size: int = 0, decisiveness: float | None = None, forced_single: bool = False,
              chain: Sequence[ChainLink] = (), routing: dict[str, Any] | None = None,
              attempts: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        **base,
        "routing_mode": routing_mode,
        "classifier_task_family": task,
        "complexity_band": complexity,
        "eligibility_pool_size": pool_size,
        "final_disposition": outcome.disposition,
        "decisiveness": decisiveness,
        "forced_single": forced_single,
        "chain_attempted": [link.route.route_id for link in chain],
        "route_displays": {link.route.route_id: link.model.name for link in chain},
        "filter_trail": list(filter_trail),
        "filter_trail_text": list(filter_trail_text),
        "routing": routing if routing is not None else {},
        "attempts": attempts if attempts is not None else [],
    }


def usage_share(state: AppState, ex: Exchange) -> None:
    """Put the request's usage in Usage's pending set (a request with a key); never waits, never raises
    (pending.py): a put that fails leaves the request to show in Usage once the writer commits it."""
    if ex.key is None:
        return
    try:
        state.usage_pending.put(usage_fields(ex))
    except Exception:
        logger.warning("usage pending set: %s not put", ex.request_id, exc_info=True)


async def decision_share(state: AppState, ex: Exchange) -> None:
    """Before the response's last byte: put the request's usage in the pending set (not awaited), and copy the
    decision to the shared cache, where every process's GET /routing-decisions finds it before its row is written
    (awaited; returns at once when nothing was routed)."""
    usage_share(state, ex)
    entry = decision_entry(ex)
    if entry is not None:
        await state.decisions.put(ex.request_id, entry["organization_id"], decision_shown(entry))
