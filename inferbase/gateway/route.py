"""Route one request: read the shared caches, classify (auto only), count tokens and decide.

`lookups_fetch` does the asynchronous reads; `route_request` is pure CPU over the snapshot and what was
read, so that the decision makes no I/O and no database query.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from billing.pricing import charge_multiplier
from providers.content import content_text
from routing.classifier import classification_key, classify
from routing.decision import AUTO_MODEL_NAMES, Classification, Decision, RoutingError, RoutingRequest
from routing.engine import decide
from routing.snapshot import Snapshot
from routing.tokens import count_prompt_tokens

from .errors import NotRouted
from .exchange import Exchange, Routed
from .request import ChatRequest
from .shared import SharedLRU

if TYPE_CHECKING:
    from .state import AppState


def _classifier_input(chat: ChatRequest) -> tuple[str, str]:
    system = "\n".join(content_text(m.get("content")) for m in chat.messages if m.get("role") in ("system", "developer"))
    user = next((content_text(m.get("content")) for m in reversed(chat.messages) if m.get("role") == "user"), "")
    return system, user


def _classification_key(chat: ChatRequest) -> str:
    system, user = _classifier_input(chat)
    return classification_key(system=system, user=user, has_tools=chat.has_tools)


def classification_for(classifications: SharedLRU, chat: ChatRequest, lookups: Lookups | None = None) -> Classification:
    """Classify on the system prompt and last user turn; a cache hit (here or from Redis) says so."""
    if lookups is not None and lookups.classification_key is not None:
        key, hit = lookups.classification_key, lookups.classification
    else:
        key = _classification_key(chat)
        hit = classifications.get_local(key)
    if hit is not None:
        return Classification(hit["task"], hit["complexity"], hit["estimated"], cached=True)
    system, user = _classifier_input(chat)
    result = classify(system=system, user=user, has_tools=chat.has_tools)
    classifications.put(key, {"task": result.task, "complexity": result.complexity, "estimated": result.estimated})
    return Classification(result.task, result.complexity, result.estimated, cached=False)


@dataclass(frozen=True, slots=True)
class Lookups:
    """What routing reads from the shared caches, fetched (asynchronously) before deciding."""

    classification_key: str | None
    classification: dict[str, Any] | None
    session_model: str | None
    started: float


async def lookups_fetch(state: AppState, chat: ChatRequest) -> Lookups:
    """Read the shared caches a decision needs: a classification, the conversation's model, route health."""
    started = time.perf_counter()
    key = classification = None
    if chat.model in AUTO_MODEL_NAMES:
        key = _classification_key(chat)
        classification = await state.classifications.get(key)
    session_model = await state.sessions.get(conversation_key(chat)) if chat.has_history else None
    await state.route_health.refresh()
    return Lookups(key, classification, session_model, started)


def conversation_key(chat: ChatRequest) -> str:
    """Identify a conversation by its opening (system prompt and first user turn)."""
    h = hashlib.blake2b(digest_size=16)
    for message in chat.messages:
        if message.get("role") in ("system", "developer", "user"):
            h.update(content_text(message.get("content")).encode())
        if message.get("role") == "user":
            break
    return h.hexdigest()


def session_remember(sessions: SharedLRU, chat: ChatRequest, session_model: str | None, served_model: str) -> None:
    """Anchor the conversation to the model that served its first turn (a fallback included); a later
    turn, named or moved to another model, keeps the anchor (and its time to live) as it is."""
    sessions.put(conversation_key(chat), session_model or served_model)


def route_request(state: AppState, ex: Exchange, snapshot: Snapshot, lookups: Lookups | None = None) -> Decision:
    """Classify (auto only), count tokens and decide; set the exchange's `routed`, or raise NotRouted.

    Pure CPU over the snapshot: shared-cache reads happen before, in `lookups_fetch`; without them
    only this process's caches are consulted."""
    assert ex.chat is not None and ex.key is not None
    chat, key = ex.chat, ex.key
    t0 = lookups.started if lookups is not None else time.perf_counter()
    prompt_tokens = count_prompt_tokens(list(chat.messages))
    if chat.has_tools:
        prompt_tokens += len(orjson.dumps(chat.forward.get("tools"))) // 4
    classification = classification_for(state.classifications, chat, lookups) if chat.model in AUTO_MODEL_NAMES else Classification(None, None)
    if lookups is not None:
        session_model = lookups.session_model
    else:
        session_model = state.sessions.get_local(conversation_key(chat)) if chat.has_history else None
    request = RoutingRequest(
        model=chat.model,
        prompt_tokens=prompt_tokens,
        max_tokens=chat.max_tokens,
        stream=chat.stream,
        needs_tools=chat.has_tools,
        needs_structured_output=chat.response_format_type is not None,
        needs_vision=chat.has_images,
        extended_thinking=chat.extended_thinking,
        tool_loop=chat.tool_loop,
        has_history=chat.has_history,
        session_model=session_model,
        project_id=key.project_id,
        cost_multiplier=charge_multiplier(plan=key.plan, markup_bps=key.markup_bps),
        resting_routes=state.route_health.resting(),
        overrides=chat.routing,
    )
    policy = snapshot.policy_for(
        key_policy_id=key.policy_id, project_id=key.project_id, organization_id=key.organization_id
    )
    try:
        decision = decide(request, classification, policy, snapshot)
    except RoutingError as exc:
        raise NotRouted(exc.status, exc.message, code=exc.code, param=exc.param, filter_trail=tuple(exc.filter_trail),
                        filter_trail_text=tuple(exc.filter_trail_text),
                        routing_mode=chat.routing.optimize or policy.objective, classification=classification) from exc
    routing = {"object": "routing", **decision.routing}
    routing["routing_time_ms"] = round((time.perf_counter() - t0) * 1000, 3)
    # A conversation whose model left the catalog is anchored afresh by the model that serves this turn.
    anchored = session_model if session_model in snapshot.models else None
    ex.routed = Routed(decision, routing, prompt_tokens, anchored)
    return decision
