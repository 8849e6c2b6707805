"""Structured-output repair of a whole answer: the JSON document taken out of fences or commentary, a
re-ask when the policy says so, the schema checked; what was done is reported, never hidden."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

from providers.errors import UpstreamError

from .assemble import Choice, choices_of
from .attempt import Attempt
from .charge import billed_attempt, usage_from
from .exchange import Exchange
from .structured import json_extract, schema_errors

REASK_PROMPT = "Reply with only the JSON document, with no code fences and no commentary."


async def structured_repairs(ex: Exchange, attempt: Attempt, client: Any, result: dict[str, Any],
                             choices: tuple[Choice, ...], text: str) -> tuple[dict[str, Any], tuple[Choice, ...]]:
    """Take the JSON document out of each choice; each re-ask is billed on the exchange (and its usage shown)."""
    assert ex.routed is not None
    if len(choices) == 1:
        repaired = [await _structured_repair(ex, attempt, client, choices[0])]
    else:
        repaired = await asyncio.gather(*(_structured_repair(ex, attempt, client, choice) for choice in choices))
    for _, usage in repaired:
        if usage is not None:
            # A re-ask is a second call on the same route, billed; the usage shown adds it (charge.usage_with_reasks).
            ex.billed.append(billed_attempt(attempt.link, usage, "reask"))
    return result, tuple(choice for choice, _ in repaired)


async def _structured_repair(ex: Exchange, attempt: Attempt, client: Any,
                             choice: Choice) -> tuple[Choice, dict[str, Any] | None]:
    """Take the JSON document out of one choice; ask once more when the policy says so and there is none.
    Return the choice (with its repair report when there is something to report) and the re-ask's usage."""
    assert ex.chat is not None and ex.routed is not None
    content = choice.message.get("content")
    if not isinstance(content, str):
        return choice, None
    extraction = json_extract(content)
    repair: dict[str, Any] = {"applied": False}
    reask_usage = None
    if extraction.document is None and ex.routed.decision.policy.structured_output_reask:
        ex.attempts.append(attempt.result("no_json_document", calls=1))
        again = {**attempt.body, "messages": [*attempt.body["messages"], {"role": "assistant", "content": content},
                                              {"role": "user", "content": REASK_PROMPT}]}
        started = time.perf_counter()
        try:
            result = await attempt.adapter.complete(client, attempt.target, again, attempt.options)
        except UpstreamError as exc:
            ex.attempts.append(attempt.result(exc.outcome, status=exc.status, error=exc.message, started=started,
                                              calls=1))
            return replace(choice, repair={"applied": False, "reason": "no_document", "reasked": True}), None
        reask_usage = usage_from(result.get("usage"), str(choices_of(result)[0].message.get("content") or ""),
                                 ex.routed.prompt_tokens_estimate)
        # The re-ask's answer, in the place of the first (whose logprobs stay: the client asked for those).
        choice = replace(choices_of(result)[0], logprobs=choice.logprobs)
        content = choice.message.get("content") or ""
        extraction = json_extract(content)
        repair["reasked"] = True
    if extraction.document is None:
        repair.update({"reason": "no_document"})
    elif extraction.method is not None:
        choice = replace(choice, message={**choice.message, "content": extraction.document})
        repair.update({"applied": True, "method": extraction.method})
    if extraction.document is not None and ex.chat.json_schema:
        errors = schema_errors(extraction.document, ex.chat.json_schema)
        repair["schema_valid"] = not errors
        if errors:
            repair["schema_errors"] = errors
    if repair != {"applied": False}:
        choice = replace(choice, repair=repair)
    return choice, reask_usage
