"""A whole answer: each attempt read as one chat.completion of n choices, and answered as JSON."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .assemble import TRUNCATED_HINT, Choice, choices_of
from .attempt import Attempt
from .chain import served
from .choices import all_or_none, completion_from_chunks, completions_merge
from .errors import ChainFailed
from .exchange import Exchange
from .guard import output_check
from .repair import structured_repairs

if TYPE_CHECKING:
    from .state import AppState


@dataclass(frozen=True, slots=True)
class WholeRead:
    """One attempt's answer: the upstream's chat.completion (its usage) and its choices."""

    result: dict[str, Any]
    choices: tuple[Choice, ...]
    timings = None

    @property
    def cut(self) -> bool:
        return all(choice.cut_before_content for choice in self.choices)

    @property
    def usage(self) -> dict[str, Any] | None:
        return self.result.get("usage")

    def text(self) -> str:
        return "".join(str(choice.message.get("content") or "") for choice in self.choices)


class WholeAnswer:
    """Reads each attempt whole (a stream assembled, for a thinking model) and answers with a chat.completion."""

    stream = False
    serves_cut = True

    def __init__(self, state: AppState, ex: Exchange) -> None:
        self._state = state
        self._ex = ex
        self._client = state.upstream.client()

    async def read(self, attempt: Attempt) -> WholeRead:
        """Return one attempt's answer as one chat.completion of n choices: one upstream call asked for n, or
        `calls` calls in parallel; raise what the upstream raised."""
        if attempt.calls > 1:
            result = completions_merge(await all_or_none(self._call(attempt, attempt.body) for _ in range(attempt.calls)))
        else:
            result = await self._call(attempt, {**attempt.body, "n": attempt.n} if attempt.n > 1 else attempt.body)
        return WholeRead(result, choices_of(result))

    async def _call(self, attempt: Attempt, body: dict[str, Any]) -> dict[str, Any]:
        if attempt.budget.upstream_stream:
            return await completion_from_chunks(attempt.adapter.stream(self._client, attempt.target, body, attempt.options),
                                                attempt.budget.attempt_max_s)
        return await attempt.adapter.complete(self._client, attempt.target, body, attempt.options)

    async def amend(self, attempt: Attempt, read: WholeRead) -> WholeRead:  # type: ignore[override]
        """Take the JSON document out of each answer when structured output was asked for and the policy extracts."""
        ex = self._ex
        assert ex.chat is not None and ex.routed is not None
        if not (ex.chat.response_format_type and ex.routed.decision.policy.structured_output_extraction):
            return read
        result, choices = await structured_repairs(ex, attempt, self._client, read.result, read.choices, read.text())
        return WholeRead(result, choices)

    async def serve(self, attempt: Attempt, read: WholeRead) -> dict[str, Any]:  # type: ignore[override]
        return completion_body(self._state, self._ex, attempt, read)

    async def fail(self, error: ChainFailed) -> dict[str, Any]:
        raise error

    async def broke_off(self, attempt: Attempt, outcome: str) -> dict[str, Any]:
        raise AssertionError("a whole answer never breaks off: nothing reaches the client before it is complete")


def completion_body(state: AppState, ex: Exchange, attempt: Attempt, read: WholeRead) -> dict[str, Any]:
    """End the request as served by the attempt; return the chat.completion the client gets."""
    assert ex.routed is not None
    choices = read.choices
    link = attempt.link
    blocked = None
    if ex.guardrails.output:
        choices, blocked = output_check(ex, choices)  # charged before the request is priced, below
    repairs = [choice.repair for choice in choices]
    repair: Any = None
    if len(repairs) == 1:
        repair = repairs[0]
    elif any(r is not None for r in repairs):
        repair = [r or {"applied": False} for r in repairs]  # one report per choice, in choice order
    outcome = served(state, ex, link, read.result.get("usage"), read.text(), choices[0].finish_reason, repair)
    if blocked is not None:
        raise blocked  # the answer is withheld; its upstream call and the checks are still charged
    routing = {k: v for k, v in ex.routed.routing.items() if k != "object"}
    if any(choice.truncated_by_thinking for choice in choices):
        routing["truncated"] = "max_tokens"
        routing["truncated_hint"] = TRUNCATED_HINT
    usage_out = dict(outcome.usage)
    usage_out.pop("estimated", None)
    usage_out["cost_micros"] = outcome.cost_micros
    usage_out["latency_ms"] = ex.elapsed_ms()
    if outcome.dropped_params:
        usage_out["dropped_params"] = list(outcome.dropped_params)
    if repair is not None:
        usage_out["structured_output_repair"] = repair
    return {
        "id": ex.request_id,
        "object": "chat.completion",
        "created": int(ex.created),
        "model": link.model.id,
        "choices": [{"index": i, "message": choice.message, "finish_reason": choice.finish_reason or "stop",
                     "logprobs": choice.logprobs} for i, choice in enumerate(choices)],
        "usage": usage_out,
        "routing": routing,
    }
