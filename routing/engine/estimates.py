"""Thinking rules and the per-route expectations routing ranks on: expected cost and expected wait."""

from __future__ import annotations

from dataclasses import dataclass

from ..decision import Classification, RoutingRequest
from ..snapshot import ModelSnap, RouteSnap

ANSWER_TOKENS = 400  # the answer length routing expects when ranking
ANSWER_RESERVE = 256  # room kept for the answer when max_tokens is not set
TASKS_THAT_THINK = frozenset({"factual", "maths", "coding"})


@dataclass(frozen=True, slots=True)
class ThinkingWish:
    """What thinking the request wants from a model: on, off, or left to the model (None)."""

    value: bool | None
    by_client: bool
    reason: str | None  # auto's reason, when auto decided


@dataclass(frozen=True, slots=True)
class Thinking:
    """How the model will run: shown mode, the reason to state, what to send upstream, and whether it thinks."""

    mode: str | None  # on | off; None when not known (the model's reasoning is unmeasured)
    reason: str | None
    send: bool | None
    thinks: bool


def leaves_no_room_to_think(model: ModelSnap, max_tokens: int | None) -> bool:
    """Return True when max_tokens is below the model's usual reasoning plus room for an answer."""
    return max_tokens is not None and max_tokens < model.typical_reasoning_tokens + ANSWER_RESERVE


def thinking_wish(model: ModelSnap, request: RoutingRequest, classification: Classification,
                  objective: str) -> ThinkingWish:
    """Return the client's thinking choice when it made one, else auto's for this model."""
    if request.extended_thinking is not None:
        return ThinkingWish(request.extended_thinking, True, None)
    if leaves_no_room_to_think(model, request.max_tokens):
        return ThinkingWish(False, False, "max_tokens")
    if objective == "latency":
        return ThinkingWish(False, False, "latency_mode")
    if classification.complexity == "easy":
        return ThinkingWish(False, False, "easy_prompt")
    if classification.task in TASKS_THAT_THINK:
        return ThinkingWish(True, False, "task_needs_thinking")
    if classification.task == "reasoning" and classification.complexity == "hard":
        return ThinkingWish(None, False, "cheaper_with_thinking")
    return ThinkingWish(None, False, None)


def thinking_for(model: ModelSnap, wish: ThinkingWish, default_on: bool | None, *, can_think: bool = True,
                 can_switch: bool | None = True) -> Thinking:
    """Return how the model runs under the wish; never send a switch to a model without one.

    `default_on` says whether a switchable model thinks when it is sent no switch, as its routes serve
    it (None when they disagree); `can_think` is False when max_tokens is below the smallest its routes
    can think with (Anthropic's minimum budget plus room for the answer): thinking is then off, since
    max_tokens is never raised. `can_switch` is False when none of its routes can switch it (they declare
    no switch): it then runs its default whatever is asked, like a model that always or never reasons;
    None when some can and some cannot, so that a switch away from the default may or may not be obeyed.
    The mode is None (not known) for a model whose reasoning is unmeasured, or whose outcome depends on
    which route serves it."""
    reasoning = model.reasoning
    if reasoning == "switchable" and can_switch is False and default_on is not None:
        reasoning = "always_on" if default_on else "none"
    if reasoning == "unknown":
        return Thinking(None, None, None, False)
    if reasoning == "none":
        if wish.by_client:
            return Thinking("off", "route_cannot_think" if wish.value else None, None, False)
        return Thinking("off", wish.reason if wish.value is False else None, None, False)
    if reasoning == "always_on":
        if wish.value is False:
            return Thinking("on", "model_ignores_off", None, True)
        return Thinking("on", None if wish.by_client else wish.reason, None, True)
    reason = None if wish.by_client else wish.reason
    if not can_think and (wish.value if wish.value is not None else default_on) is not False:
        return Thinking("off", "max_tokens", False, False)
    if wish.value is None:  # left to the model: its default as served
        if default_on is None:
            return Thinking(None, None, None, True)
        return Thinking("on" if default_on else "off", reason, None, default_on)
    if can_switch is not True and wish.value != default_on:  # obeyed only where the route can switch
        return Thinking(None, None, wish.value, True)
    return Thinking("on" if wish.value else "off", reason, wish.value, wish.value)


def reasoning_tokens(model: ModelSnap, thinks: bool) -> int:
    """Return the reasoning tokens expected before the answer."""
    return model.typical_reasoning_tokens if thinks else 0


def answer_tokens(max_tokens: int | None) -> int:
    """Return the answer length routing expects: 400 tokens, or max_tokens when smaller."""
    return min(max_tokens or ANSWER_TOKENS, ANSWER_TOKENS)


def expected_cost_micros(route: RouteSnap, prompt_tokens: int, output_tokens: int) -> float:
    """Return the list-price cost of a typical answer on this route, in micro-dollars."""
    return prompt_tokens * route.price_input + output_tokens * route.price_output


def worst_case_cost_micros(route: RouteSnap, request: RoutingRequest) -> float:
    """Return the most this route can cost the organization: the whole max_tokens (or route limit) spent."""
    output = request.max_tokens or route.max_output_tokens
    return (request.prompt_tokens * route.price_input + output * route.price_output) * request.cost_multiplier


def wait_basis(stream: bool, thinks: bool) -> str:
    """Return which wait the client experiences: first_token, first_answer_token or end_to_end."""
    if not stream:
        return "end_to_end"
    return "first_answer_token" if thinks else "first_token"


def expected_wait_ms(route: RouteSnap, basis: str, reasoning: int, answer: int) -> float | None:
    """Return the expected wait on this route for the basis, or None when the route has no latency figure.

    Measured from traffic, the basis's own p50 is the wait; where traffic has not measured that basis
    (or only the catalog's prior is known), it is modelled: first token, plus the tokens before the
    awaited one at the route's decode speed."""
    latency = route.latency
    if latency is None:
        return None
    measured = _MEASURED.get(basis)
    if measured is not None:
        value = getattr(latency, measured)
        if value is not None:
            return float(value)
    if latency.ttft_ms_p50 is None:
        return None
    if basis == "first_token":
        return float(latency.ttft_ms_p50)
    tps = latency.tokens_per_second
    if not tps or tps <= 0:
        return None
    tokens = reasoning if basis == "first_answer_token" else reasoning + answer
    return latency.ttft_ms_p50 + tokens / tps * 1000.0


# The traffic figure that is the wait itself, for each basis (None on the catalog's prior).
_MEASURED = {"first_token": "ttft_ms_p50", "first_answer_token": "first_answer_token_ms_p50",
             "end_to_end": "end_to_end_ms_p50"}
