"""One request as it goes down the walk, and the typed values its steps hand on.

Each step sets its own field of the `Exchange` once: the API its key and parsed request, routing its
`Routed`, the chain walk its `AttemptResult`s (appended as they end, so a request cancelled mid-walk
still records them) and the time to first token, and whichever step ends the request its `Outcome`.
The disposition the log records is derived here only, from the error a request ends with (`ApiError.disposition`).
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field, replace
from typing import Any

from billing.guardrails import NO_GUARDRAILS, CheckResult, Guardrails
from billing.limits import Reservation
from billing.pricing import BilledAttempt, CostBreakdown, GuardrailCharge
from inferbase.accounts.selectors import KeyInfo
from routing.decision import ChainLink, Decision

from .errors import ApiError
from .request import ChatRequest


def request_id_new() -> str:
    return "req-" + secrets.token_hex(8)


@dataclass(frozen=True, slots=True)
class Routed:
    """What routing decided for the request."""

    decision: Decision
    routing: dict[str, Any]  # the routing object the client is shown ("object": "routing" first)
    prompt_tokens_estimate: int
    session_model: str | None  # the model that began the conversation, when known and still in the catalog


@dataclass(frozen=True, slots=True)
class AttemptResult:
    """How one attempt on one link ended, as its log record tells it."""

    route: str
    model: str
    outcome: str  # served, served_truncated, timeout, http_503, no_content_before_limit, ...
    ms: int
    status: int | None = None
    error: str = ""
    calls: int = 1  # n choices made as n upstream calls, each billed
    first_token_ms: int | None = None  # a served stream's times, for the route's latency evidence
    first_answer_token_ms: int | None = None

    def as_record(self) -> dict[str, Any]:
        """Return the attempt as the log and the decision store it."""
        record: dict[str, Any] = {"route": self.route, "model": self.model, "outcome": self.outcome, "ms": self.ms}
        if self.status is not None:
            record["status"] = self.status
        if self.error:
            record["error"] = self.error[:300]
        if self.calls > 1:
            record["calls"] = self.calls
        if self.first_token_ms is not None:
            record["first_token_ms"] = self.first_token_ms
        if self.first_answer_token_ms is not None:
            record["first_answer_token_ms"] = self.first_answer_token_ms
        return record


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the request ended: what the response said, and what the log records."""

    disposition: str  # the log's final_disposition
    status_code: int
    error_code: str = ""
    error: ApiError | None = None
    link: ChainLink | None = None  # the link that served (or whose answer broke off)
    usage: dict[str, Any] = field(default_factory=dict)
    cost_micros: int = 0
    finish_reason: str = ""
    dropped_params: tuple[str, ...] = ()
    structured_output_repair: Any = None  # the report the answer carried (one, or one per choice), for the log
    client_disconnected: bool = False


def outcome_ended(*, error: ApiError | None = None, status_code: int | None = None, error_code: str | None = None,
                  link: ChainLink | None = None, **served: Any) -> Outcome:
    """Return the outcome of a request served (no error) or ended by `error`; the one place a disposition is
    derived. `status_code` and `error_code` default to the error's (a stream that has started says 200)."""
    if error is None:
        return Outcome("served", status_code or 200, link=link, **served)
    return Outcome(error.disposition, status_code or error.status, error.code if error_code is None else error_code,
                   error=error, link=link, **served)


def outcome_with_error(before: Outcome | None, error: ApiError) -> Outcome:
    """Return the outcome once `error` is answered: a request not ended yet (or served, then failing) ends with
    it; one that had already failed keeps its disposition, with the error's status and code."""
    if before is None:
        return outcome_ended(error=error)
    disposition = error.disposition if before.disposition == "served" else before.disposition
    return replace(before, disposition=disposition, status_code=error.status, error_code=error.code, error=error)


def outcome_disconnected(before: Outcome | None) -> Outcome:
    """Return the outcome of a request whose client went away before it was answered."""
    return replace(before or Outcome("", 0), disposition="client_disconnected", status_code=499,
                   client_disconnected=True)


@dataclass(slots=True)
class Exchange:
    """One request, from arrival to its log record: what each step found, each set once by that step."""

    request_id: str
    started: float = field(default_factory=time.perf_counter)
    created: float = field(default_factory=time.time)
    key: KeyInfo | None = None
    chat: ChatRequest | None = None
    routed: Routed | None = None
    attempts: list[AttemptResult] = field(default_factory=list)
    ttft_ms: int | None = None
    outcome: Outcome | None = None
    # Every upstream call the provider billed (served, re-asks, failed attempts that reported usage) and the
    # guardrail checks run: what the request is charged, priced once into `breakdown` (charge.charge).
    billed: list[BilledAttempt] = field(default_factory=list)
    guardrail_charges: list[GuardrailCharge] = field(default_factory=list)
    breakdown: CostBreakdown | None = None
    reservation: Reservation | None = None  # what the limits hold for the request until it is settled
    limit_headers: dict[str, str] = field(default_factory=dict)  # x-ratelimit-* and budget headers, when limited
    guardrails: Guardrails = NO_GUARDRAILS  # the policy's checks
    forward_messages: list[dict[str, Any]] | None = None  # the input as checked (redacted), when it has checks
    guardrail_results: list[CheckResult] = field(default_factory=list)

    def elapsed_ms(self) -> int:
        return int((time.perf_counter() - self.started) * 1000)
