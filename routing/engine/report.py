"""The parts of the public routing object that explain a decision: session, policy, cache fit."""

from __future__ import annotations

from typing import Any

from ..decision import RoutingRequest
from ..snapshot import PolicySnap, RouteSnap, Snapshot

SESSION_MOVED = {
    "pool_loaded": "is not in the pool",
    "servable": "has no servable route",
    "context_fit": "does not fit the request's length",
    "capability_fit": "does not support what the request needs",
    "cost_ceiling": "is over the cost ceiling",
    "preset_eligibility": "does not meet the quality floor for this task",
}


def session_field(request: RoutingRequest, pick_id: str, snapshot: Snapshot, removed_by: dict[str, str],
                  pool_ids: set[str], *, pinned: bool) -> dict[str, Any] | None:
    """Return whether the conversation stayed on its model and why; None for a fresh conversation."""
    session_model = request.session_model
    if not request.has_history and session_model is None:
        return None
    if pinned:
        return {"sticky": session_model == pick_id, "model": session_model, "reason": "the request named the model"}
    if session_model is None:
        return {"sticky": False, "model": None,
                "reason": "the model that began the conversation is not known, so it was routed afresh"}
    if session_model == pick_id:
        return {"sticky": True, "model": session_model, "reason": "stayed on the model that began the conversation"}
    if session_model not in snapshot.models:
        step, phrase = None, "is no longer in the catalog"
    else:
        step = removed_by.get(session_model, "pool_loaded" if session_model not in pool_ids else None)
        phrase = SESSION_MOVED.get(step or "", "was not eligible")
    session: dict[str, Any] = {"sticky": False, "model": session_model,
                               "reason": f"moved: the model that began the conversation {phrase}"}
    if step is not None:
        session["step"] = step
    return session


def cache_fit(route: RouteSnap, prefer_cache: bool) -> dict[str, Any]:
    """Return whether the prompt-cache preference was satisfied and how the chosen provider caches."""
    return {
        "preference": "prefer" if prefer_cache else "none",
        "provider_caching": route.prompt_caching,
        "satisfied": not prefer_cache or route.prompt_caching != "none",
    }


def policy_field(policy: PolicySnap, rules: list[str], ignored: list[str]) -> dict[str, Any] | None:
    """Return the policy rules that shaped the decision; None under the untouched Inferbase default."""
    if policy.source == "inferbase" and not rules and not ignored:
        return None
    return {"name": policy.name, "source": policy.source, "rules": rules, "ignored": ignored}
