"""The spec's timeout rules, as numbers the attempts run under."""

from __future__ import annotations

from dataclasses import dataclass

# chat-completions spec: a non-streamed attempt gets at least 60 s and the request at least 90 s;
# when the model thinks, a non-streamed answer fails only after 30 s of silence or 10 minutes in all.
# A stream's budget runs to the first token; after that only silence ends it.
NONSTREAM_MIN_ATTEMPT_S = 60.0
NONSTREAM_MIN_DEADLINE_S = 90.0
THINKING_SILENCE_S = 30.0
THINKING_DEADLINE_S = 600.0
STREAM_IDLE_S = 30.0
STREAM_MAX_S = 3600.0


@dataclass(frozen=True, slots=True)
class Budget:
    first_token_s: float  # per attempt
    idle_s: float  # silence allowed between stream events once tokens flow
    first_token_deadline_s: float  # from the request's start: no attempt may still be waiting past it
    attempt_max_s: float  # hard cap on one attempt once it has started answering
    upstream_stream: bool  # ask the upstream for a stream (assembled for a non-streamed client)


def budget_for(*, stream: bool, thinks: bool, first_token_ms: int, deadline_ms: int) -> Budget:
    """Return the budget for a request under the policy's first-token budget and total deadline."""
    if stream:
        return Budget(first_token_ms / 1000, STREAM_IDLE_S, deadline_ms / 1000, STREAM_MAX_S, True)
    if thinks:
        return Budget(THINKING_SILENCE_S, THINKING_SILENCE_S, THINKING_DEADLINE_S, THINKING_DEADLINE_S, True)
    attempt = max(first_token_ms / 1000, NONSTREAM_MIN_ATTEMPT_S)
    total = max(deadline_ms / 1000, NONSTREAM_MIN_DEADLINE_S)
    return Budget(attempt, STREAM_IDLE_S, total, total, False)
