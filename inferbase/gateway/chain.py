"""Walk the chain: the one loop that tries each link in turn, for whole answers and streams alike.

What differs between the two is a `Reading`: how an attempt is read (a whole answer, or chunks relayed as
they come, where the first token counts from), and how the request is answered or failed. Fallback, the
budgets, attempt records and the circuit breaker are here and in `attempt`, once. (The tool-loop rule is
routing's: in a tool loop the chain holds the picked model's options only.)
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from providers.errors import CONNECTION_CAUSES, UNREACHABLE, UpstreamError
from routing.decision import ChainLink

from .attempt import Attempt, attempt_plan, dropped_for
from .charge import bill_failed, billed_attempt, charge, usage_from, usage_with_reasks
from .errors import ChainFailed
from .exchange import AttemptResult, Exchange, Outcome, outcome_ended
from .route import session_remember

if TYPE_CHECKING:
    from .state import AppState

T = TypeVar("T", covariant=True)


class Read(Protocol):
    """What one attempt brought back."""

    @property
    def cut(self) -> bool:
        """True when the answer stopped at the token limit before any content (thinking used it up)."""
        ...

    @property
    def timings(self) -> dict[str, int] | None:
        """The attempt's first-token times, for the route's latency evidence (streams only)."""
        ...

    @property
    def usage(self) -> dict[str, Any] | None:
        """The usage the upstream reported for the attempt (None when it sent none): what it billed."""
        ...


class BrokeOff(Exception):
    """A stream failed after tokens reached the client: no fallback, the stream ends with an error event."""

    def __init__(self, error: UpstreamError | TimeoutError) -> None:
        super().__init__(str(error))
        self.error = error
        self.outcome = error.outcome if isinstance(error, UpstreamError) else "timeout"


class Reading(Protocol[T]):  # type: ignore[misc]
    """How the chain's attempts are read and the request answered: a whole answer, or a stream."""

    stream: bool  # which of the spec's budgets apply
    # Whole answers: an answer cut off before content is served when no later link answers (and the last
    # link's is served as it is). A stream sends nothing of such an answer, so it is only a failed attempt.
    serves_cut: bool

    async def read(self, attempt: Attempt) -> Read: ...

    async def amend(self, attempt: Attempt, read: Read) -> Read: ...

    async def serve(self, attempt: Attempt, read: Read) -> T: ...

    async def fail(self, error: ChainFailed) -> T: ...

    async def broke_off(self, attempt: Attempt, outcome: str) -> T: ...


async def walk(state: AppState, ex: Exchange, reading: Reading[T]) -> T:
    """Try the chain's links in order until one answers; return what the reading answers with, or its failure.

    A link that times out, fails or is cut off before content yields to the next; a refusal another route
    would refuse too ends the walk at once; so does the first-token deadline."""
    assert ex.chat is not None and ex.routed is not None
    chain = ex.routed.decision.chain
    messages = ex.forward_messages if ex.forward_messages is not None else list(ex.chat.messages)  # checked input
    body = {"messages": messages, **ex.chat.forward}
    # A whole answer cut off before content, its record and its billed call (None: the upstream reported no usage).
    kept: tuple[Attempt, Read, int, int | None] | None = None
    for index, link in enumerate(chain):
        attempt = attempt_plan(state, ex, link, body, stream=reading.stream)
        if attempt is None:
            break
        try:
            read = await reading.read(attempt)
        except BrokeOff as broke:
            ex.attempts.append(attempt.result(broke.outcome, error=str(broke.error)))
            return await reading.broke_off(attempt, broke.outcome)
        except UpstreamError as exc:
            ex.attempts.append(attempt.result(exc.outcome, status=exc.status, error=exc.message))
            if not exc.retryable:
                return await reading.fail(rejected(exc))
            continue
        except TimeoutError:
            ex.attempts.append(attempt.result("timeout"))
            continue
        if read.cut and not (reading.serves_cut and index + 1 == len(chain)):
            # An answer cut off before any content is a failed attempt: ask the next model.
            ex.attempts.append(attempt.result("no_content_before_limit"))
            billed = len(ex.billed)
            bill_failed(ex, link, read.usage)  # the upstream billed the reasoning that used the limit up
            if reading.serves_cut:
                kept = (attempt, read, len(ex.attempts) - 1, billed if len(ex.billed) > billed else None)
            continue
        read = await reading.amend(attempt, read)
        ex.attempts.append(attempt.result("served", timings=read.timings))
        return await reading.serve(attempt, read)
    if kept is not None:
        attempt, read, at, billed_at = kept
        ex.attempts[at] = replace(ex.attempts[at], outcome="served_truncated")
        if billed_at is not None:
            del ex.billed[billed_at]  # billed again as the served call
        return await reading.serve(attempt, read)
    return await reading.fail(all_failed(ex.attempts))


def all_failed(attempts: list[AttemptResult]) -> ChainFailed:
    """Return the error for a chain none of whose links answered: timed out, unreachable, or failed."""
    outcomes = [a.outcome for a in attempts]
    if outcomes and all("timeout" in o for o in outcomes):
        status, code, message = 504, "upstream_timeout", "Every route in the chain timed out."
    elif outcomes and all(o in UNREACHABLE for o in outcomes):
        causes = ", ".join(dict.fromkeys(CONNECTION_CAUSES[o] for o in outcomes))
        status, code, message = 502, "upstream_unreachable", f"No route in the chain could be reached ({causes})."
    else:
        status, code, message = 502, "upstream_error", "Every route in the chain failed."
    detail = "; ".join(f"{a.route}: {a.outcome}" for a in attempts)
    return ChainFailed(status, f"{message} Attempts: {detail}.", code=code)


def rejected(exc: UpstreamError) -> ChainFailed:
    """Return the error for an upstream refusal that another route would refuse too (no fallback)."""
    return ChainFailed(400 if exc.status and exc.status < 500 else 502, f"The upstream refused the request: {exc.message}",
                       code="upstream_rejected")


def broke_off_error(outcome: str) -> ChainFailed:
    """Return the error a stream ends with when its upstream failed after the answer had started."""
    return ChainFailed(502, f"The upstream failed after the answer had started ({outcome}); the answer is incomplete.",
                       code="failed_mid_stream")


def served(state: AppState, ex: Exchange, link: ChainLink, upstream_usage: dict[str, Any] | None, completion_text: str,
           finish_reason: str | None, structured_output_repair: Any = None) -> Outcome:
    """End the request as served by `link`: its usage (the upstream's, else estimated) billed and the request
    charged once (every billed call and check), the conversation anchored to its model; return the outcome
    (also set on the exchange)."""
    assert ex.chat is not None and ex.key is not None and ex.routed is not None
    usage = usage_from(upstream_usage, completion_text, ex.routed.prompt_tokens_estimate)
    ex.billed.append(billed_attempt(link, usage, "served"))
    ex.outcome = outcome_ended(link=link, usage=usage_with_reasks(usage, ex.billed), cost_micros=charge(ex).cost_micros,
                               finish_reason=finish_reason or "stop", dropped_params=dropped_for(ex.chat, link),
                               structured_output_repair=structured_output_repair)
    session_remember(state.sessions, ex.chat, ex.routed.session_model, link.model.id)
    return ex.outcome
