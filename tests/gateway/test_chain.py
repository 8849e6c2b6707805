"""The chain walk, rule by rule, against upstreams made with httpx.MockTransport (in-process, no sockets).

Each link of a chain is a route on its own host; the transport answers each host as the test says. Beside
these, tests/api/ walks the same rules end to end against the simulated upstream over HTTP; more rules are in
test_chain_rules.py.
"""

from __future__ import annotations

import json
import time

import pytest

from inferbase.gateway.answer import answer_stream, answer_whole
from inferbase.gateway.errors import ChainFailed
from tests.gateway.upstreams import (
    Behaviour,
    Upstreams,
    completion,
    exchange,
    link,
    outcomes,
    refused,
    slow,
    sse,
    status,
    streamed,
    timed_out,
)

# --- whole answers -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("failure", "outcome"), [
    (status(503), "http_503"),
    (status(429), "rate_limited"),
    (status(401), "http_401"),  # this route's credential: another route's may do
    (refused, "connection_refused"),
    (timed_out, "timeout"),
])
async def test_a_failed_link_yields_to_the_next(state, failure: Behaviour, outcome: str) -> None:  # type: ignore[no-untyped-def]
    upstreams = Upstreams(a=failure, b=completion("from b"))
    ex = exchange(link("a"), link("b"))
    body = await answer_whole(state(upstreams), ex)
    assert body["model"] == "model-b" and body["choices"][0]["message"]["content"] == "from b"
    assert outcomes(ex) == [outcome, "served"]
    assert ex.outcome is not None and ex.outcome.disposition == "served" and ex.outcome.link.model.id == "model-b"


async def test_a_refusal_any_route_would_repeat_ends_the_walk(state) -> None:  # type: ignore[no-untyped-def]
    upstreams = Upstreams(a=status(400), b=completion())
    ex = exchange(link("a"), link("b"))
    with pytest.raises(ChainFailed) as failed:
        await answer_whole(state(upstreams), ex)
    assert (failed.value.status, failed.value.code, failed.value.disposition) == (400, "upstream_rejected",
                                                                                  "upstream_rejected")
    assert outcomes(ex) == ["http_400"] and upstreams.calls["b"] == 0


@pytest.mark.parametrize(("failures", "status_code", "code", "words"), [
    ((refused, refused), 502, "upstream_unreachable", "No route in the chain could be reached (connection refused)"),
    ((timed_out, timed_out), 504, "upstream_timeout", "Every route in the chain timed out"),
    ((status(503), timed_out), 502, "upstream_error", "Every route in the chain failed"),
])
async def test_a_chain_none_of_whose_links_answer_says_why(state, failures: tuple[Behaviour, Behaviour],  # type: ignore[no-untyped-def]
                                                           status_code: int, code: str, words: str) -> None:
    ex = exchange(link("a"), link("b"))
    with pytest.raises(ChainFailed) as failed:
        await answer_whole(state(Upstreams(a=failures[0], b=failures[1])), ex)
    assert (failed.value.status, failed.value.code) == (status_code, code)
    assert failed.value.message.startswith(words)
    assert failed.value.message.endswith(f"Attempts: a/model-a: {ex.attempts[0].outcome}; "
                                         f"b/model-b: {ex.attempts[1].outcome}.")


# A thinking model is asked for a stream, which the gateway puts together (a whole answer after 30 s of silence).
async def test_an_answer_cut_off_before_content_yields_to_the_next_link(state) -> None:  # type: ignore[no-untyped-def]
    upstreams = Upstreams(a=sse({"reasoning_content": "thinking..."}, finish="length"), b=completion("from b"))
    ex = exchange(link("a", reasoning="always_on"), link("b"))
    body = await answer_whole(state(upstreams), ex)
    assert body["model"] == "model-b"
    assert outcomes(ex) == ["no_content_before_limit", "served"]


async def test_a_cut_off_answer_is_served_when_every_later_link_fails(state) -> None:  # type: ignore[no-untyped-def]
    upstreams = Upstreams(a=sse({"reasoning_content": "thinking..."}, finish="length"), b=status(503))
    ex = exchange(link("a", reasoning="always_on"), link("b"))
    body = await answer_whole(state(upstreams), ex)
    assert body["model"] == "model-a" and body["choices"][0]["finish_reason"] == "length"
    assert body["routing"]["truncated"] == "max_tokens" and body["routing"]["truncated_hint"]
    assert outcomes(ex) == ["served_truncated", "http_503"]


async def test_the_last_links_cut_off_answer_is_served_as_it_is(state) -> None:  # type: ignore[no-untyped-def]
    ex = exchange(link("a", reasoning="always_on"))
    body = await answer_whole(state(Upstreams(a=sse({"reasoning_content": "thinking..."}, finish="length"))), ex)
    assert body["choices"][0]["message"]["reasoning_content"] == "thinking..."
    assert outcomes(ex) == ["served"]


async def test_no_attempt_starts_past_the_first_token_deadline(state) -> None:  # type: ignore[no-untyped-def]
    upstreams = Upstreams(a=completion())
    ex = exchange(link("a"))
    ex.started = time.perf_counter() - 600  # later than any budget allows
    with pytest.raises(ChainFailed):
        await answer_whole(state(upstreams), ex)
    assert outcomes(ex) == ["skipped_deadline"] and upstreams.calls["a"] == 0


async def test_the_circuit_breaker_counts_each_routes_failures_and_successes(state) -> None:  # type: ignore[no-untyped-def]
    upstreams = Upstreams(a=status(503), b=completion())
    app = state(upstreams, threshold=2)
    for _ in range(2):
        await answer_whole(app, exchange(link("a"), link("b")))
    assert list(app.route_health.resting()) == ["a/model-a"]  # two failures in a row: it rests
    upstreams.behaviours["c"] = status(503)
    await answer_whole(app, exchange(link("c"), link("b")))
    upstreams.behaviours["c"] = completion()
    await answer_whole(app, exchange(link("c")))  # a success clears the count
    upstreams.behaviours["c"] = status(503)
    await answer_whole(app, exchange(link("c"), link("b")))
    assert "c/model-c" not in app.route_health.resting()


# --- streams -------------------------------------------------------------------------------------------


async def test_a_stream_falls_back_while_nothing_was_sent(state) -> None:  # type: ignore[no-untyped-def]
    upstreams = Upstreams(a=status(503), b=sse({"content": "Hel"}, {"content": "lo"}))
    ex = exchange(link("a"), link("b"), stream=True)
    events = await streamed(state(upstreams), ex)
    assert [e if isinstance(e, str) else e["object"] for e in events] == [
        "routing", "chat.completion.chunk", "chat.completion.chunk", "chat.completion.chunk", "usage", "[DONE]"]
    assert "".join(e["choices"][0]["delta"].get("content") or "" for e in events[1:4]) == "Hello"
    assert outcomes(ex) == ["http_503", "served"]
    assert ex.attempts[1].first_token_ms is not None  # the served stream's times, for the route's evidence


async def test_a_stream_whose_first_token_is_late_falls_back(state) -> None:  # type: ignore[no-untyped-def]
    upstreams = Upstreams(a=slow(2.0, sse({"content": "late"})), b=sse({"content": "on time"}))
    ex = exchange(link("a"), link("b"), stream=True, first_token_ms=200)
    events = await streamed(state(upstreams), ex)
    assert events[1]["model"] == "model-b"
    assert outcomes(ex) == ["first_token_timeout", "served"]


async def test_a_stream_that_breaks_after_its_first_token_ends_with_an_error_event(state) -> None:  # type: ignore[no-untyped-def]
    upstreams = Upstreams(a=sse({"content": "Hel"}, finish=None, broken=True), b=sse({"content": "b"}))
    ex = exchange(link("a"), link("b"), stream=True)
    events = await streamed(state(upstreams), ex)
    assert events[1]["choices"][0]["delta"]["content"] == "Hel"
    assert events[-2] == {"object": "error", "error": {
        "message": "The upstream failed after the answer had started (connection_lost); the answer is incomplete.",
        "type": "upstream_error", "code": "failed_mid_stream", "param": None}}
    assert events[-1] == "[DONE]"
    assert upstreams.calls["b"] == 0  # no fallback once the client has tokens
    assert outcomes(ex) == ["connection_lost"]
    assert ex.outcome is not None
    assert (ex.outcome.disposition, ex.outcome.status_code, ex.outcome.error_code) == (
        "failed_mid_stream", 200, "connection_lost")


async def test_a_stream_of_held_reasoning_only_is_a_failed_attempt(state) -> None:  # type: ignore[no-untyped-def]
    upstreams = Upstreams(a=sse({"reasoning_content": "secret thoughts"}, finish="length"),
                          b=sse({"content": "answer"}))
    ex = exchange(link("a", reasoning="always_on"), link("b"), stream=True, extended_thinking=False)
    events = await streamed(state(upstreams), ex)
    assert outcomes(ex) == ["no_content_before_limit", "served"]
    assert "secret thoughts" not in json.dumps(events)  # the held reasoning never reached the client
    assert events[1]["model"] == "model-b"


async def test_a_stream_that_fails_before_anything_was_sent_raises_for_an_http_status(state) -> None:  # type: ignore[no-untyped-def]
    sent: list[bytes] = []
    ex = exchange(link("a"), link("b"), stream=True)
    with pytest.raises(ChainFailed) as failed:
        await answer_stream(state(Upstreams(a=status(503), b=status(502))), ex, sent.append)
    assert failed.value.status == 502 and sent == []
    assert outcomes(ex) == ["http_503", "http_502"]
