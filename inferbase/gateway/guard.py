"""Guardrail checks on the request path (docs/billing.md, "Wiring"): a policy's checks compiled once per snapshot,
the input checked before any upstream call, the answer checked whole or as it streams.

A policy without checks costs one dict lookup per request and one truth test per streamed chunk.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from billing.guardrails import (
    NO_GUARDRAILS,
    GuardrailBlocked,
    GuardrailConfigError,
    Guardrails,
    StreamGuard,
    guardrail_config_parse,
    guardrails_compile,
    messages_check,
    texts_check,
)
from billing.pricing import GuardrailCharge
from routing.snapshot import PolicySnap

from .assemble import Choice
from .errors import ApiError
from .exchange import Exchange

logger = logging.getLogger("inferbase.gateway")


def guardrails_by_policy(policies: Iterable[PolicySnap]) -> dict[int | None, Guardrails]:
    """Compile each policy's checks (only policies that have some). A configuration that does not parse (it was
    validated when saved, so only a write around the admin) is logged and that policy runs no checks."""
    compiled: dict[int | None, Guardrails] = {}
    for policy in policies:
        if not policy.guardrails:
            continue
        try:
            compiled[policy.id] = guardrails_compile(guardrail_config_parse(policy.guardrails))
        except GuardrailConfigError as exc:
            logger.error("policy %s: guardrails ignored, invalid configuration: %s", policy.id, "; ".join(exc.errors))
    return compiled


def blocked_error(exc: GuardrailBlocked) -> ApiError:
    """Return the 400 envelope naming the check that blocked."""
    return ApiError(exc.status, exc.message, code=exc.code, param=exc.param)


def output_charges(guardrails: Guardrails) -> tuple[GuardrailCharge, ...]:
    return tuple(GuardrailCharge(str(c.spec.check), c.where, c.spec.price_micros) for c in guardrails.output)


def input_check(ex: Exchange) -> None:
    """Run the exchange's input checks: the messages to forward (redacted where a check redacts), results and
    charges on the exchange. Raises ApiError 400 (guardrail_blocked) when a block check finds something."""
    guardrails = ex.guardrails
    if not guardrails.input:
        return
    assert ex.chat is not None
    messages, outcome = messages_check(ex.chat.messages, guardrails.input)
    ex.forward_messages = messages
    ex.guardrail_results.extend(outcome.results)
    ex.guardrail_charges.extend(outcome.charges)
    try:
        outcome.raise_if_blocked()
    except GuardrailBlocked as exc:
        raise blocked_error(exc) from exc


def output_check(ex: Exchange, choices: tuple[Choice, ...]) -> tuple[tuple[Choice, ...], ApiError | None]:
    """Run the output checks over a whole answer's choices; return them (redacted where a check redacts) and the
    error to answer with when a block check found something (the answer is then withheld)."""
    checks = ex.guardrails.output
    at = [i for i, c in enumerate(choices) if isinstance(c.message.get("content"), str)]
    outcome = texts_check([str(choices[i].message["content"]) for i in at], checks)
    ex.guardrail_results.extend(outcome.results)
    ex.guardrail_charges.extend(outcome.charges)
    out = list(choices)
    for i, text in zip(at, outcome.texts, strict=True):
        if text is not choices[i].message["content"]:
            out[i] = replace(choices[i], message={**choices[i].message, "content": text})
    blocked = GuardrailBlocked(outcome.blocked) if outcome.blocked is not None else None
    return tuple(out), blocked_error(blocked) if blocked is not None else None


class StreamChecks:
    """The output checks over a streamed answer: one StreamGuard per choice, so redaction is the same whatever
    the chunking; `chunk` rewrites a chunk's content deltas in place."""

    def __init__(self, ex: Exchange) -> None:
        self._ex = ex
        self._checks = ex.guardrails.output
        self._guards: dict[int, StreamGuard] = {}

    def chunk(self, chunk: dict[str, Any]) -> bool:
        """Check the chunk's content: held back, redacted, or released at its choice's finish. Return whether the
        chunk still has something to send. Raises ApiError (guardrail_blocked) when a block check fires."""
        send = False
        for choice in chunk["choices"]:
            delta = choice.get("delta") or {}
            guard = self._guards.get(choice.get("index", 0))
            if guard is None:
                guard = self._guards[choice.get("index", 0)] = StreamGuard(self._checks)
            content = delta.get("content")
            text = guard.feed(content) if content else ""
            if choice.get("finish_reason"):
                text += guard.finish()
            if guard.blocked is not None:
                self.end()
                raise blocked_error(GuardrailBlocked(guard.blocked))
            if content is not None or text:
                delta["content"] = text
            if text or choice.get("finish_reason") or any(k not in ("role", "content") for k in delta):
                send = True
        return send

    def end(self) -> None:
        """Put what the checks found and cost on the exchange (once, when the answer ends or is blocked)."""
        for guard in self._guards.values():
            self._ex.guardrail_results.extend(guard.results())
        self._ex.guardrail_charges.extend(output_charges(self._ex.guardrails))
        self._guards.clear()


__all__ = ["NO_GUARDRAILS", "StreamChecks", "guardrails_by_policy", "input_check", "output_check"]
