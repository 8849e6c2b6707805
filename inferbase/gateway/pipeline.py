"""One request through the gateway: route, walk the chain, charge, answer, and hand the record off.

The consumer owns the socket; this module owns the request's semantics. Nothing here touches the
ORM: the snapshot and key lookups come from `state`, and the record goes to the recorder's queue.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import asdict, dataclass, field
from typing import Any

import orjson
from django.conf import settings

from billing.pricing import Charging, RoutePrice, UsageCounts, cost_micros
from inferbase.accounts.selectors import KeyInfo
from inferbase.api.errors import ApiError, ErrorType
from inferbase.api.validation import ChatRequest
from observability.recorder import recorder
from observability.selectors import decision_shown
from providers.base import CallOptions, UpstreamTarget
from providers.errors import CONNECTION_CAUSES, UNREACHABLE, UpstreamError
from providers.http import shared_client
from providers.registry import adapter_for
from routing.classifier import classification_key, classify
from routing.decision import (
    AUTO_MODEL_NAMES,
    ChainLink,
    Classification,
    Decision,
    RoutingError,
    RoutingRequest,
)
from routing.engine import decide
from routing.snapshot import Snapshot
from routing.tokens import count_prompt_tokens

from .assemble import ChunkAssembler, message_clean
from .choices import all_or_none, completion_from_chunks, completions_merge, streams_merge, upstream_calls
from .decisions import shared_decisions
from .shared import classifications, route_health, sessions
from .structured import json_extract, schema_errors
from .timeouts import Budget, budget_for

logger = logging.getLogger("inferbase.gateway")

TRUNCATED_HINT = (
    "The answer stopped at max_tokens while the model was thinking; thinking counts toward max_tokens. "
    "Raise max_tokens, or send extended_thinking: false for a direct answer."
)
Emit = Callable[[bytes], None]  # hands SSE bytes to the response writer; never blocks


def request_id_new() -> str:
    return "req-" + secrets.token_hex(8)


@dataclass
class Exchange:
    """The mutable state of one request, from arrival to its log record."""

    request_id: str
    started: float = field(default_factory=time.perf_counter)
    created: float = field(default_factory=time.time)
    key: KeyInfo | None = None
    chat: ChatRequest | None = None
    decision: Decision | None = None
    routing: dict[str, Any] | None = None
    prompt_tokens_estimate: int = 0
    attempts: list[dict[str, Any]] = field(default_factory=list)
    served: ChainLink | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    cost_micros: int = 0
    status_code: int = 200
    disposition: str = "served"
    error_code: str = ""
    finish_reason: str = ""
    ttft_ms: int | None = None
    client_disconnected: bool = False
    dropped_params: tuple[str, ...] = ()
    recorded: bool = False
    # When routing found nothing to serve the request: the trail up to the step that emptied it.
    unrouted_trail: tuple[tuple[dict[str, Any], ...], tuple[str, ...]] | None = None
    unrouted_mode: str = ""
    unrouted_classification: Classification | None = None
    session_model: str | None = None  # the model that began the conversation, when known

    def elapsed_ms(self) -> int:
        return int((time.perf_counter() - self.started) * 1000)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def _classifier_input(chat: ChatRequest) -> tuple[str, str]:
    system = "\n".join(_text_of(m.get("content")) for m in chat.messages if m.get("role") in ("system", "developer"))
    user = next((_text_of(m.get("content")) for m in reversed(chat.messages) if m.get("role") == "user"), "")
    return system, user


def _classification_key(chat: ChatRequest) -> str:
    system, user = _classifier_input(chat)
    return classification_key(system=system, user=user, has_tools=chat.has_tools)


def classification_for(chat: ChatRequest, lookups: Lookups | None = None) -> Classification:
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


async def lookups_fetch(chat: ChatRequest) -> Lookups:
    """Read the shared caches a decision needs: a classification, the conversation's model, route health."""
    started = time.perf_counter()
    key = classification = None
    if chat.model in AUTO_MODEL_NAMES:
        key = _classification_key(chat)
        classification = await classifications.get(key)
    session_model = await sessions.get(conversation_key(chat)) if chat.has_history else None
    await route_health.refresh()
    return Lookups(key, classification, session_model, started)


def conversation_key(chat: ChatRequest) -> str:
    """Identify a conversation by its opening (system prompt and first user turn)."""
    h = hashlib.blake2b(digest_size=16)
    for message in chat.messages:
        if message.get("role") in ("system", "developer", "user"):
            h.update(_text_of(message.get("content")).encode())
        if message.get("role") == "user":
            break
    return h.hexdigest()


def _cost_multiplier(key: KeyInfo) -> float:
    return 0.0 if key.plan == "free" else (10_000 + key.markup_bps) / 10_000


def route_request(ex: Exchange, snapshot: Snapshot, lookups: Lookups | None = None) -> Decision:
    """Classify (auto only), count tokens and decide; sets the routing object on the exchange.

    Pure CPU over the snapshot: shared-cache reads happen before, in `lookups_fetch`; without them
    only this process's caches are consulted."""
    assert ex.chat is not None and ex.key is not None
    chat, key = ex.chat, ex.key
    t0 = lookups.started if lookups is not None else time.perf_counter()
    prompt_tokens = count_prompt_tokens(list(chat.messages))
    if chat.has_tools:
        prompt_tokens += len(orjson.dumps(chat.forward.get("tools"))) // 4
    ex.prompt_tokens_estimate = prompt_tokens
    classification = classification_for(chat, lookups) if chat.model in AUTO_MODEL_NAMES else Classification(None, None)
    if lookups is not None:
        session_model = lookups.session_model
    else:
        session_model = sessions.get_local(conversation_key(chat)) if chat.has_history else None
    # A conversation whose model left the catalog is anchored afresh by the model that serves this turn.
    ex.session_model = session_model if session_model in snapshot.models else None
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
        cost_multiplier=_cost_multiplier(key),
        resting_routes=route_health.resting(),
        overrides=chat.routing,
    )
    policy = snapshot.policy_for(
        key_policy_id=key.policy_id, project_id=key.project_id, organization_id=key.organization_id
    )
    try:
        decision = decide(request, classification, policy, snapshot)
    except RoutingError as exc:
        ex.disposition = "not_routed"
        ex.unrouted_trail = (tuple(exc.filter_trail), tuple(exc.filter_trail_text))
        ex.unrouted_mode = chat.routing.optimize or policy.objective
        ex.unrouted_classification = classification
        raise ApiError(exc.status, exc.message, code=exc.code, param=exc.param) from exc
    routing = {"object": "routing", **decision.routing}
    routing["routing_time_ms"] = round((time.perf_counter() - t0) * 1000, 3)
    ex.decision = decision
    ex.routing = routing
    return decision


def _thinks(link: ChainLink) -> bool:
    """Return True when this link's model will reason (so the thinking timeouts apply)."""
    if link.model.reasoning == "always_on":
        return True
    if link.model.reasoning == "none":
        return False
    return link.thinking is not False


def _thinking_switch(link: ChainLink) -> bool | None:
    """Return the thinking switch sent to this link: on, off, or none (only a switchable model takes one)."""
    return link.thinking if link.model.reasoning == "switchable" else None


def _call_options(link: ChainLink, budget: Budget, first_token_s: float) -> CallOptions:
    return CallOptions(
        first_token_timeout=max(0.001, first_token_s),
        idle_timeout=budget.idle_s,
        deadline=time.monotonic() + budget.attempt_max_s,
        thinking=_thinking_switch(link),
    )


def _target(link: ChainLink) -> UpstreamTarget:
    route = link.route
    return UpstreamTarget(
        provider=route.provider,
        dialect=route.dialect,
        base_url=route.base_url,
        upstream_model=route.upstream_model,
        api_key=link.api_key,
        thinking_switch=route.thinking_switch,
    )


def _declined(chat: ChatRequest, link: ChainLink) -> frozenset[str]:
    """Return the fields the link's model cannot take, whatever its provider: reasoning_effort on a model that
    never reasons (OpenAI and Groq refuse the request with it)."""
    if link.model.reasoning == "none" and "reasoning_effort" in chat.forward:
        return frozenset({"reasoning_effort"})
    return frozenset()


def _link_body(chat: ChatRequest, link: ChainLink, body: dict[str, Any]) -> dict[str, Any]:
    """Return the body for this link: the request's, without what the link's model declines."""
    declined = _declined(chat, link)
    return {k: v for k, v in body.items() if k not in declined} if declined else body


def _dropped_for(chat: ChatRequest, link: ChainLink) -> tuple[str, ...]:
    """Return what the request reports as not forwarded on the link that served it."""
    adapter = adapter_for(link.route.dialect)
    skipped = adapter.not_forwarded(chat.forward, _target(link), _thinking_switch(link))
    return tuple(sorted({*chat.dropped_params, *_declined(chat, link), *skipped}))


# Outcomes that say the route itself is unwell (count toward its circuit breaker).
ROUTE_FAILURES = frozenset({*CONNECTION_CAUSES, "timeout", "first_token_timeout", "malformed_response",
                            "rate_limited", "upstream_error"})


def _attempt_record(link: ChainLink, outcome: str, started: float, *, status: int | None = None,
                    error: str = "", calls: int = 1) -> dict[str, Any]:
    if outcome == "served":
        route_health.record(link.route.route_id, ok=True)
    elif outcome in ROUTE_FAILURES or outcome.startswith("http_5"):
        route_health.record(link.route.route_id, ok=False)
    record: dict[str, Any] = {
        "route": link.route.route_id,
        "model": link.model.id,
        "outcome": outcome,
        "ms": int((time.perf_counter() - started) * 1000),
    }
    if status is not None:
        record["status"] = status
    if error:
        record["error"] = error[:300]
    if calls > 1:
        record["calls"] = calls  # n choices made as n upstream calls, each billed
    return record


def _charge(ex: Exchange, link: ChainLink, usage: dict[str, Any]) -> int:
    assert ex.key is not None
    cached = ((usage.get("prompt_tokens_details") or {}).get("cached_tokens")) or 0
    counts = UsageCounts(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0), int(cached))
    price = RoutePrice(link.route.price_input, link.route.price_output, link.route.price_cached_input)
    return cost_micros(counts, price, Charging(plan=ex.key.plan, markup_bps=ex.key.markup_bps, own_provider_key=link.own_key))


def _usage_from(ex: Exchange, upstream: dict[str, Any] | None, completion_text: str) -> dict[str, Any]:
    if upstream and "prompt_tokens" in upstream:
        usage = {k: upstream[k] for k in ("prompt_tokens", "completion_tokens", "total_tokens",
                                          "prompt_tokens_details", "completion_tokens_details") if upstream.get(k) is not None}
        usage.setdefault("total_tokens", int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0)))
        return usage
    completion = max(1, len(completion_text) // 4) if completion_text else 0
    return {"prompt_tokens": ex.prompt_tokens_estimate, "completion_tokens": completion,
            "total_tokens": ex.prompt_tokens_estimate + completion, "estimated": True}


def _all_failed(ex: Exchange) -> ApiError:
    outcomes = [a["outcome"] for a in ex.attempts]
    if outcomes and all("timeout" in o for o in outcomes):
        status, code, message = 504, "upstream_timeout", "Every route in the chain timed out."
    elif outcomes and all(o in UNREACHABLE for o in outcomes):
        causes = ", ".join(dict.fromkeys(CONNECTION_CAUSES[o] for o in outcomes))
        status, code, message = 502, "upstream_unreachable", f"No route in the chain could be reached ({causes})."
    else:
        status, code, message = 502, "upstream_error", "Every route in the chain failed."
    detail = "; ".join(f"{a['route']}: {a['outcome']}" for a in ex.attempts)
    ex.disposition = code
    return ApiError(status, f"{message} Attempts: {detail}.", code=code, type=ErrorType.UPSTREAM)


def _rejected(ex: Exchange, exc: UpstreamError) -> ApiError:
    """Return the error for an upstream refusal that another route would refuse too (no fallback)."""
    ex.disposition = "upstream_rejected"
    return ApiError(400 if exc.status and exc.status < 500 else 502, f"The upstream refused the request: {exc.message}",
                    code="upstream_rejected", type=ErrorType.UPSTREAM)


def _first_token_left(ex: Exchange, budget: Budget) -> float:
    return min(budget.first_token_s, budget.first_token_deadline_s - (time.perf_counter() - ex.started))


def _attempt_plan(ex: Exchange, link: ChainLink, *, stream: bool) -> tuple[Budget, CallOptions] | None:
    """Return the budget and call options for the next attempt, or None when the deadline has passed."""
    assert ex.decision is not None
    budget = budget_for(stream=stream, thinks=_thinks(link), first_token_ms=ex.decision.first_token_timeout_ms,
                        deadline_ms=ex.decision.total_deadline_ms)
    left = _first_token_left(ex, budget)
    if left <= 0:
        ex.attempts.append(_attempt_record(link, "skipped_deadline", time.perf_counter()))
        return None
    return budget, _call_options(link, budget, left)


def _body_for(chat: ChatRequest) -> dict[str, Any]:
    return {"messages": list(chat.messages), **chat.forward}


def _truncated_by_thinking(message: dict[str, Any], finish_reason: str | None) -> bool:
    return finish_reason == "length" and bool(message.get("reasoning_content"))


async def complete(ex: Exchange) -> dict[str, Any]:
    """Walk the chain for a non-streamed request; return the response body or raise ApiError."""
    assert ex.chat is not None and ex.decision is not None
    chat, decision = ex.chat, ex.decision
    client = shared_client(settings.INFERBASE_UPSTREAM_TRANSPORT)
    body = _body_for(chat)
    chain = decision.chain
    # The last answer that was cut off before any content: served only if every later link fails.
    last_result: tuple[ChainLink, dict[str, Any], list[dict[str, Any]], dict[str, Any]] | None = None
    for index, link in enumerate(chain):
        planned = _attempt_plan(ex, link, stream=False)
        if planned is None:
            break
        budget, options = planned
        adapter = adapter_for(link.route.dialect)
        calls = upstream_calls(chat.n, link)
        link_body = _link_body(chat, link, body)
        started = time.perf_counter()
        try:
            result = await _complete_attempt(chat.n, calls, adapter, client, _target(link), link_body, options, budget)
        except UpstreamError as exc:
            ex.attempts.append(_attempt_record(link, exc.outcome, started, status=exc.status, error=exc.message,
                                               calls=calls))
            if not exc.retryable:
                raise _rejected(ex, exc) from exc
            continue
        except TimeoutError:
            ex.attempts.append(_attempt_record(link, "timeout", started, calls=calls))
            continue
        messages = _answers(result)
        if index + 1 < len(chain) and all(_cut_before_content(m) for m in messages):
            # An answer cut off before any content is a failed attempt: ask the next model.
            record = _attempt_record(link, "no_content_before_limit", started, calls=calls)
            ex.attempts.append(record)
            last_result = (link, result, messages, record)
            continue
        if chat.response_format_type and decision.policy.structured_output_extraction:
            result, messages = await _structured_repairs(ex, link, adapter, client, link_body, options, result,
                                                         messages, started)
        ex.attempts.append(_attempt_record(link, "served", started, calls=calls))
        return _completion_response(ex, link, result, messages)
    if last_result is not None:
        link, result, messages, record = last_result
        record["outcome"] = "served_truncated"
        return _completion_response(ex, link, result, messages)
    raise _all_failed(ex)


async def _complete_attempt(n: int, calls: int, adapter: Any, client: Any, target: UpstreamTarget,
                            body: dict[str, Any], options: CallOptions, budget: Budget) -> dict[str, Any]:
    """Return one attempt's answer as one chat.completion of n choices: one upstream call asked for n,
    or `calls` calls in parallel; raise what the upstream raised."""
    if calls > 1:
        return completions_merge(await all_or_none(
            _complete_call(adapter, client, target, body, options, budget) for _ in range(calls)))
    return await _complete_call(adapter, client, target, {**body, "n": n} if n > 1 else body, options, budget)


async def _complete_call(adapter: Any, client: Any, target: UpstreamTarget, body: dict[str, Any],
                         options: CallOptions, budget: Budget) -> dict[str, Any]:
    if budget.upstream_stream:
        return await completion_from_chunks(adapter.stream(client, target, body, options), budget.attempt_max_s)
    return await adapter.complete(client, target, body, options)


def _answers(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the messages of an upstream answer, each with its finish_reason under `_finish`."""
    messages = []
    for choice in result["choices"]:
        message = message_clean(choice.get("message") or {})
        message["_finish"] = choice.get("finish_reason")
        messages.append(message)
    return messages


def _cut_before_content(message: dict[str, Any]) -> bool:
    return message["_finish"] == "length" and not message.get("content") and not message.get("tool_calls")


REASK_PROMPT = "Reply with only the JSON document, with no code fences and no commentary."


async def _structured_repairs(ex: Exchange, link: ChainLink, adapter: Any, client: Any, body: dict[str, Any],
                              options: CallOptions, result: dict[str, Any], messages: list[dict[str, Any]],
                              started: float) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Take the JSON document out of each answer; a re-ask's usage is added to the result's."""
    content = "".join(str(m.get("content") or "") for m in messages)
    if len(messages) == 1:
        repaired = [await _structured_repair(ex, link, adapter, client, body, options, messages[0], started)]
    else:
        repaired = await asyncio.gather(*(_structured_repair(ex, link, adapter, client, body, options, m, started)
                                          for m in messages))
    extra = [usage for _, usage in repaired if usage is not None]
    if extra:
        # A re-ask is a second attempt on the same route, billed: its usage is added to the first's.
        first = _usage_from(ex, result.get("usage"), content)
        result = {**result, "usage": {k: int(first.get(k, 0)) + sum(int(u.get(k, 0)) for u in extra)
                                      for k in ("prompt_tokens", "completion_tokens", "total_tokens")}}
    return result, [message for message, _ in repaired]


async def _structured_repair(ex: Exchange, link: ChainLink, adapter: Any, client: Any, body: dict[str, Any],
                             options: CallOptions, message: dict[str, Any],
                             started: float) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Take the JSON document out of one answer; ask once more when the policy says so and there is none.
    Return the message (with `_repair` when there is something to report) and the re-ask's usage."""
    assert ex.chat is not None and ex.decision is not None
    content = message.get("content")
    if not isinstance(content, str):
        return message, None
    extraction = json_extract(content)
    repair: dict[str, Any] = {"applied": False}
    reask_usage = None
    if extraction.document is None and ex.decision.policy.structured_output_reask:
        ex.attempts.append(_attempt_record(link, "no_json_document", started))
        again = {**body, "messages": [*body["messages"], {"role": "assistant", "content": content},
                                      {"role": "user", "content": REASK_PROMPT}]}
        started = time.perf_counter()
        try:
            result = await adapter.complete(client, _target(link), again, options)
        except UpstreamError as exc:
            ex.attempts.append(_attempt_record(link, exc.outcome, started, status=exc.status, error=exc.message))
            message["_repair"] = {"applied": False, "reason": "no_document", "reasked": True}
            return message, None
        reask_usage = _usage_from(ex, result.get("usage"), "")
        message = _answers(result)[0]
        content = message.get("content") or ""
        extraction = json_extract(content)
        repair["reasked"] = True
    if extraction.document is None:
        repair.update({"reason": "no_document"})
    elif extraction.method is not None:
        message["content"] = extraction.document
        repair.update({"applied": True, "method": extraction.method})
    if extraction.document is not None and ex.chat.json_schema:
        errors = schema_errors(extraction.document, ex.chat.json_schema)
        repair["schema_valid"] = not errors
        if errors:
            repair["schema_errors"] = errors
    if repair != {"applied": False}:
        message["_repair"] = repair
    return message, reask_usage


def _completion_response(ex: Exchange, link: ChainLink, result: dict[str, Any],
                         messages: list[dict[str, Any]]) -> dict[str, Any]:
    assert ex.chat is not None and ex.routing is not None
    ex.served = link
    ex.finish_reason = messages[0]["_finish"] or "stop"
    ex.dropped_params = _dropped_for(ex.chat, link)
    usage = _usage_from(ex, result.get("usage"), "".join(str(m.get("content") or "") for m in messages))
    ex.usage = usage
    ex.cost_micros = _charge(ex, link, usage)
    routing = {k: v for k, v in ex.routing.items() if k != "object"}
    if any(_truncated_by_thinking(m, m["_finish"]) for m in messages):
        routing["truncated"] = "max_tokens"
        routing["truncated_hint"] = TRUNCATED_HINT
    _remember_session(ex, link)
    usage_out = dict(usage)
    usage_out.pop("estimated", None)
    usage_out["cost_micros"] = ex.cost_micros
    usage_out["latency_ms"] = ex.elapsed_ms()
    if ex.dropped_params:
        usage_out["dropped_params"] = list(ex.dropped_params)
    upstream_choices = result["choices"]
    choices: list[dict[str, Any]] = []
    repairs: list[dict[str, Any] | None] = []
    for i, message in enumerate(messages):
        finish = message.pop("_finish", None) or "stop"
        repairs.append(message.pop("_repair", None))
        logprobs = upstream_choices[i].get("logprobs") if i < len(upstream_choices) else None
        choices.append({"index": i, "message": message, "finish_reason": finish, "logprobs": logprobs})
    if len(repairs) == 1 and repairs[0] is not None:
        usage_out["structured_output_repair"] = repairs[0]
    elif len(repairs) > 1 and any(r is not None for r in repairs):
        # One report per choice, in choice order.
        usage_out["structured_output_repair"] = [r or {"applied": False} for r in repairs]
    if "structured_output_repair" in usage_out:
        usage["structured_output_repair"] = usage_out["structured_output_repair"]  # for the log record (ex.usage)
    return {
        "id": ex.request_id,
        "object": "chat.completion",
        "created": int(ex.created),
        "model": link.model.id,
        "choices": choices,
        "usage": usage_out,
        "routing": routing,
    }


def _remember_session(ex: Exchange, link: ChainLink) -> None:
    """Anchor the conversation to the model that served its first turn (a fallback included); a later
    turn, named or moved to another model, keeps the anchor (and its time to live) as it is."""
    if ex.chat is not None:
        sessions.put(conversation_key(ex.chat), ex.session_model or link.model.id)


def sse(data: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(data) + b"\n\n"


SSE_DONE = b"data: [DONE]\n\n"
SSE_KEEPALIVE = b": processing\n\n"
# The Inferbase events carry one choice with an empty delta, so client loops that read
# `chunk.choices[0].delta` (OpenAI's documented loop, the SDK helpers) pass over them unharmed.
NO_DELTA_CHOICES = [{"index": 0, "delta": {}, "finish_reason": None}]


class _Committed(Exception):
    """A failure after tokens reached the client: no fallback, an error event instead."""

    def __init__(self, error: UpstreamError | TimeoutError) -> None:
        self.error = error


class _StreamOut:
    """The stream's way out. Holds the routing event until the first bytes go (the first chunk, or a
    keepalive), so a chain that fails before then can still be answered with an HTTP error status;
    sends `: processing` when nothing has been sent for `interval` seconds. One timer per stream that
    re-arms itself while data flows, so a fast stream pays no task and no timer per chunk."""

    def __init__(self, emit: Emit, interval: float, opening: bytes) -> None:
        self._emit = emit
        self._interval = interval
        self._opening = opening
        self._loop = asyncio.get_running_loop()
        self._last = self._loop.time()
        self._handle: asyncio.TimerHandle | None = None

    @property
    def started(self) -> bool:
        """Whether anything (the routing event first) has gone to the client."""
        return not self._opening

    def emit(self, data: bytes) -> None:
        self._last = self._loop.time()
        if self._opening:
            self._emit(self._opening)
            self._opening = b""
        self._emit(data)

    def __enter__(self) -> _StreamOut:
        self._handle = self._loop.call_at(self._last + self._interval, self._fire)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self) -> None:
        now = self._loop.time()
        due = self._last + self._interval
        if now >= due:
            self.emit(SSE_KEEPALIVE)
            due = now + self._interval
        self._handle = self._loop.call_at(due, self._fire)


def _chunk_out(ex: Exchange, link: ChainLink, chunk: dict[str, Any]) -> dict[str, Any]:
    """Relabel an upstream chunk as ours, in place (it was parsed for us): our id, the catalog model."""
    chunk["id"] = ex.request_id
    chunk["object"] = "chat.completion.chunk"
    chunk["created"] = int(ex.created)
    chunk["model"] = link.model.id
    chunk.pop("system_fingerprint", None)
    chunk.pop("usage", None)
    for choice in chunk["choices"]:
        choice.setdefault("finish_reason", None)
        delta = choice.get("delta")
        if delta and "reasoning" in delta and "reasoning_content" not in delta:
            delta["reasoning_content"] = delta.pop("reasoning")
    return chunk


async def stream(ex: Exchange, emit: Emit) -> None:
    """Walk the chain for a streamed request, emitting SSE: routing, chunks, usage, [DONE].

    Nothing is emitted until the first chunk is at hand or the keepalive interval passes; a chain
    that fails before then raises ApiError, as when not streamed. After that a failure is an error
    event."""
    assert ex.chat is not None
    client = shared_client(settings.INFERBASE_UPSTREAM_TRANSPORT)
    body = _body_for(ex.chat)
    with _StreamOut(emit, settings.INFERBASE_STREAM_KEEPALIVE_SECONDS, sse(routing_event(ex))) as out:
        await _stream_chain(ex, client, body, out)


async def _stream_fail(ex: Exchange, out: _StreamOut, error: ApiError) -> None:
    """Raise `error` while nothing has been sent; after that, end the stream with an error event (the
    decision shared first, so it is readable once the client has [DONE])."""
    if not out.started:
        raise error
    ex.status_code = 200
    ex.error_code = error.code
    out.emit(sse({"object": "error", "error": error.envelope()["error"]}))
    await decision_share(ex)
    out.emit(SSE_DONE)


async def _stream_chain(ex: Exchange, client: Any, body: dict[str, Any], out: _StreamOut) -> None:
    assert ex.chat is not None and ex.decision is not None and ex.routing is not None
    emit = out.emit
    hold_reasoning = ex.chat.extended_thinking is False
    for link in ex.decision.chain:
        planned = _attempt_plan(ex, link, stream=True)
        if planned is None:
            break
        budget, options = planned
        adapter = adapter_for(link.route.dialect)
        calls = upstream_calls(ex.chat.n, link)
        started = time.perf_counter()
        try:
            source = _stream_source(ex.chat.n, calls, adapter, client, _target(link), _link_body(ex.chat, link, body),
                                    options)
            served = await _stream_attempt(ex, link, source, emit, hold_reasoning, budget)
        except _Committed as committed:
            err = committed.error
            outcome = err.outcome if isinstance(err, UpstreamError) else "timeout"
            ex.attempts.append(_attempt_record(link, outcome, started, error=str(err), calls=calls))
            ex.disposition = "failed_mid_stream"
            ex.status_code = 200
            ex.error_code = outcome
            ex.served = link
            emit(sse({"object": "error", "error": {
                "message": f"The upstream failed after the answer had started ({outcome}); the answer is incomplete.",
                "type": str(ErrorType.UPSTREAM), "code": ex.disposition, "param": None}}))
            await decision_share(ex)
            emit(SSE_DONE)
            return
        except UpstreamError as exc:
            ex.attempts.append(_attempt_record(link, exc.outcome, started, status=exc.status, error=exc.message,
                                               calls=calls))
            if not exc.retryable:
                await _stream_fail(ex, out, _rejected(ex, exc))
                return
            continue
        except TimeoutError:
            ex.attempts.append(_attempt_record(link, "timeout", started, calls=calls))
            continue
        if served is None:
            ex.attempts.append(_attempt_record(link, "no_content_before_limit", started, calls=calls))
            continue
        # The first-token times go to the route's latency evidence (read by the log writer, off this path).
        ex.attempts.append(_attempt_record(link, "served", started, calls=calls) | served.first_tokens_ms(started))
        await _stream_finish(ex, link, served)
        await _emit_usage(ex, link, served, emit)
        return
    await _stream_fail(ex, out, _all_failed(ex))


def _stream_source(n: int, calls: int, adapter: Any, client: Any, target: UpstreamTarget, body: dict[str, Any],
                   options: CallOptions) -> AsyncIterator[dict[str, Any]]:
    """Return one attempt's chunks, of n choices: one upstream stream asked for n, or `calls` streams
    interleaved by choice index."""
    if calls > 1:
        return streams_merge([adapter.stream(client, target, body, options) for _ in range(calls)])
    return adapter.stream(client, target, {**body, "n": n} if n > 1 else body, options)


async def _stream_attempt(ex: Exchange, link: ChainLink, source: AsyncIterator[dict[str, Any]], emit: Emit,
                          hold_reasoning: bool, budget: Budget) -> ChunkAssembler | None:
    """Relay one attempt; before the first token a failure raises (fallback), after it `_Committed`."""
    assembler = ChunkAssembler()
    pending: list[dict[str, Any]] = []
    committed = False
    try:
        async with asyncio.timeout(budget.attempt_max_s), aclosing(source) as events:  # type: ignore[type-var]
            async for chunk in events:
                content, reasoning, finish = assembler.add(chunk)
                if not chunk.get("choices"):
                    continue  # the upstream's usage chunk: we send our own usage
                out = _chunk_out(ex, link, chunk)
                if committed:
                    emit(sse(out))
                    continue
                if finish and not content and hold_reasoning and assembler.reasoning:
                    return None  # the answer ended with held reasoning only: a failed attempt
                if content or finish or (reasoning and not hold_reasoning):
                    committed = True
                    ex.ttft_ms = ex.elapsed_ms()
                    for held in pending:
                        emit(sse(held))
                    pending.clear()
                    emit(sse(out))
                else:
                    pending.append(out)
    except (UpstreamError, TimeoutError) as exc:
        if committed:
            raise _Committed(exc) from exc
        raise
    if not committed:
        return None  # ended with reasoning only (held) or nothing at all
    return assembler


async def _stream_finish(ex: Exchange, link: ChainLink, assembler: ChunkAssembler) -> None:
    assert ex.chat is not None
    ex.served = link
    ex.finish_reason = assembler.finish_reason or "stop"
    ex.dropped_params = _dropped_for(ex.chat, link)
    ex.usage = _usage_from(ex, assembler.usage, "".join(assembler.content))
    ex.cost_micros = _charge(ex, link, ex.usage)
    _remember_session(ex, link)


def routing_event(ex: Exchange) -> dict[str, Any]:
    """Return the stream's routing event: the routing object, shaped as a chunk with an empty delta."""
    assert ex.routing is not None
    return {"id": ex.request_id, "object": "routing", "created": int(ex.created), **ex.routing,
            "choices": NO_DELTA_CHOICES}


async def _emit_usage(ex: Exchange, link: ChainLink, assembler: ChunkAssembler, emit: Emit) -> None:
    """Emit OpenAI's usage chunk (when asked for), then the usage event and [DONE].

    The token counts go only in OpenAI's chunk, so code that sums `chunk.usage` counts them once;
    the usage event carries what the request cost and how long it took."""
    assert ex.chat is not None
    latency_ms = ex.elapsed_ms()
    if ex.chat.include_usage:
        usage = {k: v for k, v in ex.usage.items() if k != "estimated"}
        usage["cost_micros"] = ex.cost_micros
        usage["latency_ms"] = latency_ms
        emit(sse({"id": ex.request_id, "object": "chat.completion.chunk", "created": int(ex.created),
                  "model": link.model.id, "choices": [], "usage": usage}))
    event: dict[str, Any] = {
        "id": ex.request_id,
        "object": "usage",
        "created": int(ex.created),
        "model": link.model.id,
        "choices": NO_DELTA_CHOICES,
        "cost_micros": ex.cost_micros,
        "latency_ms": latency_ms,
        "ttft_ms": ex.ttft_ms,
    }
    if ex.dropped_params:
        event["dropped_params"] = list(ex.dropped_params)
    if ex.finish_reason == "length" and assembler.reasoning:
        event["truncated"] = "max_tokens"
        event["truncated_hint"] = TRUNCATED_HINT
    emit(sse(event))
    await decision_share(ex)
    emit(SSE_DONE)


def requested_of(chat: ChatRequest) -> dict[str, Any]:
    """Return what the request asked of routing, as sent: its routing object, extended_thinking, max_tokens."""
    asked: dict[str, Any] = {}
    routing = {name: value for name, value in asdict(chat.routing).items() if value is not None}
    if routing:
        asked["routing"] = routing
    if chat.extended_thinking is not None:
        asked["extended_thinking"] = chat.extended_thinking
    if chat.max_tokens is not None:
        asked["max_tokens"] = chat.max_tokens
    return asked


def record(ex: Exchange) -> None:
    """Hand the request's log record (and its decision) to the recorder; at most once."""
    if ex.recorded:
        return
    ex.recorded = True
    key = ex.key
    served = ex.served
    usage = ex.usage or {}
    details = usage.get("completion_tokens_details") or {}
    routed = ex.routing or {}
    unrouted = ex.unrouted_classification
    log = {
        "request_id": ex.request_id,
        "organization_id": key.organization_id if key else None,
        "project_id": key.project_id if key else None,
        "api_key_id": key.key_id if key else None,
        "created_at": ex.created,
        "model_requested": ex.chat.model if ex.chat else "",
        "model_served": served.model.id if served else "",
        "route_served": served.route.route_id if served else "",
        "stream": bool(ex.chat and ex.chat.stream),
        "status_code": ex.status_code,
        "final_disposition": ex.disposition,
        "error_code": ex.error_code,
        "finish_reason": ex.finish_reason,
        "prompt_tokens": int(usage.get("prompt_tokens") or 0),
        "completion_tokens": int(usage.get("completion_tokens") or 0),
        "reasoning_tokens": details.get("reasoning_tokens"),
        "cost_micros": ex.cost_micros,
        "latency_ms": ex.elapsed_ms(),
        "ttft_ms": ex.ttft_ms,
        "attempts": ex.attempts,
        "dropped_params": list(ex.dropped_params),
        "client_disconnected": ex.client_disconnected,
        # Copied from the decision for Logs' filters.
        "task": routed.get("task") or (unrouted.task if unrouted else None) or "",
        "complexity": routed.get("complexity") or (unrouted.complexity if unrouted else None) or "",
        "thinking": routed.get("thinking") or "",
        "cached_tokens": (usage.get("prompt_tokens_details") or {}).get("cached_tokens"),
        "structured_output_repair": usage.get("structured_output_repair"),
        "requested": requested_of(ex.chat) if ex.chat else {},
    }
    recorder().record({"log": log, "decision": decision_entry(ex)})


def decision_entry(ex: Exchange) -> dict[str, Any] | None:
    """The request's decision as the log writer stores it (None when nothing was routed)."""
    key = ex.key
    decision = ex.decision
    if decision is not None and ex.routing is not None:
        routing = {k: v for k, v in ex.routing.items() if k != "object"}
        chain_ids = [link.route.route_id for link in decision.chain]
        return {
            "request_id": ex.request_id,
            "organization_id": key.organization_id if key else None,
            "created_at": ex.created,
            "routing_mode": routing.get("optimize_mode") or decision.policy.objective,
            "classifier_task_family": routing.get("task"),
            "complexity_band": routing.get("complexity"),
            "eligibility_pool_size": decision.eligibility_pool_size,
            "final_disposition": ex.disposition,
            "decisiveness": routing.get("decisiveness"),
            "forced_single": bool(routing.get("forced_single")),
            "chain_attempted": chain_ids,
            "route_displays": {link.route.route_id: link.model.name for link in decision.chain},
            "filter_trail": list(decision.filter_trail),
            "filter_trail_text": list(decision.filter_trail_text),
            "routing": routing,
            "attempts": ex.attempts,
        }
    elif ex.unrouted_trail is not None and ex.unrouted_trail[0]:
        trail, text = ex.unrouted_trail
        classification = ex.unrouted_classification
        return {
            "request_id": ex.request_id,
            "organization_id": key.organization_id if key else None,
            "created_at": ex.created,
            "routing_mode": ex.unrouted_mode,
            "classifier_task_family": classification.task if classification else None,
            "complexity_band": classification.complexity if classification else None,
            "eligibility_pool_size": 0,  # no model passed every eligibility step
            "final_disposition": ex.disposition,
            "decisiveness": None,
            "forced_single": False,
            "chain_attempted": [],
            "route_displays": {},
            "filter_trail": list(trail),
            "filter_trail_text": list(text),
            "routing": {},
            "attempts": [],
        }
    return None


async def decision_share(ex: Exchange) -> None:
    """Copy the decision to the shared cache, where every process's GET /routing-decisions finds it before its
    row is written; awaited before the response's last byte (returns at once when nothing was routed)."""
    entry = decision_entry(ex)
    if entry is not None:
        await shared_decisions.put(ex.request_id, entry["organization_id"], decision_shown(entry))
