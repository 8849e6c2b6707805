"""routing.decide's thinking choice, the wait basis, and the demotion of models that always think."""

from __future__ import annotations

from routing.decision import Decision
from tests.routing.conftest import (
    decide_with,
    make_catalog,
    make_classification,
    make_model,
    make_request,
    make_route,
    make_snapshot,
)

# --- thinking ----------------------------------------------------------------------------------------------


def thinking_decision(model_reasoning: str, *, task: str = "chat", complexity: str = "standard",
                      dialects: tuple[str, ...] = ("openai",), switches: tuple[str, ...] | None = None,
                      **request_fields: object) -> Decision:
    """Decide for one model with the given reasoning, served in these dialects (routes declaring these
    thinking switches, reasoning_effort by default)."""
    model = make_model(id="m", reasoning=model_reasoning, typical_reasoning_tokens=1_000,
                       benchmarks={task: 0.9})
    switches = switches or ("reasoning_effort",) * len(dialects)
    routes = [make_route(model_id="m", provider=f"p{i}", dialect=dialect, thinking_switch=switch)
              for i, (dialect, switch) in enumerate(zip(dialects, switches, strict=True))]
    return decide_with(make_snapshot([model], routes), make_request(**request_fields),
                       classification=make_classification(task, complexity))


def thinking_of(model_reasoning: str, **fields: object) -> tuple[dict, bool | None]:
    """Decide as thinking_decision does; return (routing, what to send)."""
    decision = thinking_decision(model_reasoning, **fields)  # type: ignore[arg-type]
    return decision.routing, decision.thinking


def test_thinking_off_when_max_tokens_leaves_no_room() -> None:
    routing, send = thinking_of("switchable", max_tokens=500)
    assert (routing["thinking"], routing["thinking_reason"], send) == ("off", "max_tokens", False)


def test_thinking_off_in_latency_mode() -> None:
    routing, send = thinking_of("switchable", routing={"optimize": "latency"})
    assert (routing["thinking"], routing["thinking_reason"], send) == ("off", "latency_mode", False)


def test_thinking_off_for_an_easy_prompt() -> None:
    routing, send = thinking_of("switchable", complexity="easy")
    assert (routing["thinking"], routing["thinking_reason"], send) == ("off", "easy_prompt", False)


def test_thinking_on_when_the_task_needs_it() -> None:
    routing, send = thinking_of("switchable", task="maths")
    assert (routing["thinking"], routing["thinking_reason"], send) == ("on", "task_needs_thinking", True)


def test_thinking_left_to_the_model_for_hard_reasoning() -> None:
    routing, send = thinking_of("switchable", task="reasoning", complexity="hard")
    assert (routing["thinking"], routing["thinking_reason"], send) == ("on", "cheaper_with_thinking", None)


def test_thinking_has_no_reason_when_auto_has_no_rule() -> None:
    routing, send = thinking_of("switchable")
    assert (routing["thinking"], "thinking_reason" in routing, send) == ("on", False, None)


def test_thinking_left_to_a_model_whose_default_is_off_is_off() -> None:
    # Claude, served over the Anthropic dialect, thinks only when the request enables it.
    routing, send = thinking_of("switchable", dialects=("anthropic",))
    assert (routing["thinking"], "thinking_reason" in routing, send) == ("off", False, None)
    assert routing["wait_basis"] == "end_to_end"
    routing, _ = thinking_of("switchable", dialects=("anthropic",), stream=True)
    assert routing["wait_basis"] == "first_token"  # it does not think, so no reasoning comes first


def test_thinking_asked_of_a_model_whose_default_is_off_is_on() -> None:
    routing, send = thinking_of("switchable", dialects=("anthropic",), task="maths")
    assert (routing["thinking"], routing["thinking_reason"], send) == ("on", "task_needs_thinking", True)


def test_thinking_is_absent_when_the_routes_of_a_model_disagree_on_its_default() -> None:
    routing, send = thinking_of("switchable", dialects=("openai", "anthropic"))
    assert ("thinking" in routing, "thinking_reason" in routing, send) == (False, False, None)


def test_thinking_is_absent_for_a_model_whose_reasoning_is_unmeasured() -> None:
    for fields in ({}, {"extended_thinking": True}, {"extended_thinking": False}):
        routing, send = thinking_of("unknown", **fields)  # type: ignore[arg-type]
        assert ("thinking" in routing, "thinking_reason" in routing, send) == (False, False, None)


def test_thinking_is_off_when_max_tokens_has_no_room_for_the_routes_minimum_budget() -> None:
    # Anthropic's smallest thinking budget (1024) plus room for an answer does not fit in 1000 tokens,
    # and max_tokens is never raised: thinking is off, for that reason.
    routing, send = thinking_of("switchable", dialects=("anthropic",), extended_thinking=True, max_tokens=1000)
    assert (routing["thinking"], routing["thinking_reason"], send) == ("off", "max_tokens", False)
    routing, send = thinking_of("switchable", dialects=("anthropic",), extended_thinking=True, max_tokens=1280)
    assert (routing["thinking"], "thinking_reason" in routing, send) == ("on", False, True)
    routing, send = thinking_of("switchable", dialects=("openai",), extended_thinking=True, max_tokens=1000)
    assert (routing["thinking"], "thinking_reason" in routing, send) == ("on", False, True)


def test_thinking_model_ignores_off_asked_by_the_client() -> None:
    routing, send = thinking_of("always_on", extended_thinking=False)
    assert (routing["thinking"], routing["thinking_reason"], send) == ("on", "model_ignores_off", None)


def test_thinking_model_ignores_off_asked_by_auto() -> None:
    routing, send = thinking_of("always_on", complexity="easy")
    assert (routing["thinking"], routing["thinking_reason"], send) == ("on", "model_ignores_off", None)


def test_thinking_route_cannot_think_when_the_client_asked_for_it() -> None:
    routing, send = thinking_of("none", extended_thinking=True)
    assert (routing["thinking"], routing["thinking_reason"], send) == ("off", "route_cannot_think", None)


def test_thinking_reason_is_omitted_when_the_client_got_what_it_asked() -> None:
    routing, send = thinking_of("switchable", task="maths", extended_thinking=False)
    assert (routing["thinking"], "thinking_reason" in routing, send) == ("off", False, False)


# --- wait basis --------------------------------------------------------------------------------------------


def test_wait_basis_end_to_end_when_not_streamed() -> None:
    routing, _ = thinking_of("none")
    assert (routing["wait_basis"], routing["expected_wait_ms"]) == ("end_to_end", 500 + 4_000)


def test_wait_basis_first_token_when_streamed_without_thinking() -> None:
    routing, _ = thinking_of("none", stream=True)
    assert (routing["wait_basis"], routing["expected_wait_ms"]) == ("first_token", 500)


def test_wait_basis_first_answer_token_when_streamed_with_thinking() -> None:
    routing, _ = thinking_of("always_on", stream=True)
    assert (routing["wait_basis"], routing["expected_wait_ms"]) == ("first_answer_token", 500 + 10_000)


def test_expected_wait_is_null_when_the_route_has_no_latency() -> None:
    decision = decide_with(make_catalog({"a": 0.9}, latency=None))
    assert decision.routing["expected_wait_ms"] is None


# --- always_on demotion ------------------------------------------------------------------------------------


def demotion_snapshot() -> object:
    """An always-reasoning model with the best score, and an ordinary one."""
    models = [make_model(id="gpt-oss", reasoning="always_on", typical_reasoning_tokens=1_000,
                         benchmarks={"chat": 0.95}),
              make_model(id="plain", benchmarks={"chat": 0.8})]
    return make_snapshot(models, [make_route(model_id="gpt-oss"), make_route(model_id="plain")])


def test_always_on_model_goes_behind_the_others_when_max_tokens_leaves_no_room() -> None:
    decision = decide_with(demotion_snapshot(), make_request(max_tokens=600,  # type: ignore[arg-type]
                                                             routing={"optimize": "quality"}))
    assert [link.model.id for link in decision.chain] == ["plain", "gpt-oss"]
    assert "gpt-oss was placed behind the others because max_tokens leaves too little room" in (
        decision.routing["reasoning"])


def test_always_on_model_keeps_its_rank_when_max_tokens_leaves_room() -> None:
    decision = decide_with(demotion_snapshot(), make_request(max_tokens=2_000,  # type: ignore[arg-type]
                                                             routing={"optimize": "quality"}))
    assert decision.routing["model"] == "gpt-oss"


def test_thinking_on_a_route_that_declares_no_switch_runs_the_models_default() -> None:
    # Nothing is sent where no switch is declared, so the hybrid model thinks as it does by default
    # (served OpenAI-style: on), and the routing object says so rather than claim what was asked.
    for fields in ({"extended_thinking": False}, {"complexity": "easy"}):
        routing, send = thinking_of("switchable", switches=("none",), **fields)  # type: ignore[arg-type]
        assert (routing["thinking"], routing["thinking_reason"], send) == ("on", "model_ignores_off", None)
    routing, send = thinking_of("switchable", switches=("none",), extended_thinking=True)
    assert (routing["thinking"], "thinking_reason" in routing, send) == ("on", False, None)


def test_thinking_is_absent_when_only_some_routes_can_switch_it_off() -> None:
    decision = thinking_decision("switchable", dialects=("openai", "openai"),
                                 switches=("reasoning_effort", "none"), extended_thinking=False)
    assert ("thinking" in decision.routing, decision.thinking) == (False, False)
    # The route that can switch is sent the switch; the one that cannot is sent none.
    assert {link.route.provider: link.thinking for link in decision.chain} == {"p0": False, "p1": None}
    routing, send = thinking_of("switchable", dialects=("openai", "openai"), switches=("reasoning_effort", "none"),
                                extended_thinking=True)
    assert (routing["thinking"], send) == ("on", True)  # on is what both do


def test_thinking_on_anthropic_needs_no_declared_switch() -> None:
    routing, send = thinking_of("switchable", dialects=("anthropic",), switches=("none",), task="maths")
    assert (routing["thinking"], routing["thinking_reason"], send) == ("on", "task_needs_thinking", True)
