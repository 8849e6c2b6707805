"""More of the chain walk's rules (README "Fallback", the chat-completions spec's Timeouts, docs/routing.md "The
chain"), against upstreams made with httpx.MockTransport: what each kind of failure does before and after the first
token, the spec's budgets and deadline, and the tool-loop rule from routing's chain to the walk.
"""

from __future__ import annotations

import asyncio
import json
import socket
import ssl

import httpx
import pytest

from inferbase.gateway import timeouts
from inferbase.gateway.answer import answer_whole
from inferbase.gateway.errors import ChainFailed
from tests.gateway.upstreams import (
    DONE,
    Behaviour,
    Upstreams,
    chunk,
    completion,
    exchange,
    link,
    outcomes,
    paced,
    refused,
    sse,
    status,
    streamed,
    timed_out,
)
from tests.routing.conftest import decide_with, make_model, make_request, make_route, make_snapshot


def failed_to_connect(cause: BaseException) -> Behaviour:
    """A connection that failed for `cause` (what httpx's transports chain under a ConnectError)."""

    def answer(request: httpx.Request) -> httpx.Response:
        try:
            raise cause
        except BaseException as exc:
            raise httpx.ConnectError("cannot connect", request=request) from exc

    return answer


def paced_completion(seconds: float) -> Behaviour:
    """A whole answer that takes `seconds` to come."""
    answer = completion("from a")

    async def later(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(seconds)
        return answer(request)

    return later


def body(content: bytes) -> Behaviour:
    return lambda request: httpx.Response(200, headers={"content-type": "application/json"}, content=content)


# --- before the first token: every failure but a refusal yields to the next link ----------------------------


@pytest.mark.parametrize(("failure", "outcome"), [
    (failed_to_connect(ConnectionResetError("reset")), "connection_reset"),
    (failed_to_connect(socket.gaierror(-2, "Name or service not known")), "dns_failure"),
    (failed_to_connect(ssl.SSLError(1, "handshake failure")), "tls_failure"),
    (status(500), "http_500"),
    (status(502), "http_502"),
    (status(504), "http_504"),
    (status(403), "http_403"),  # auth, permission and not-found are this route's: another may serve
    (status(404), "http_404"),
    (status(408), "http_408"),
    (status(409), "http_409"),
    (body(b"<html>bad gateway</html>"), "malformed_response"),
    (body(b'{"id": "up", "choices": []}'), "malformed_response"),
])
async def test_a_whole_answers_failed_link_yields_to_the_next(state, failure: Behaviour, outcome: str) -> None:  # type: ignore[no-untyped-def]
    upstreams = Upstreams(a=failure, b=completion("from b"))
    ex = exchange(link("a"), link("b"))
    answer = await answer_whole(state(upstreams), ex)
    assert answer["model"] == "model-b" and answer["choices"][0]["message"]["content"] == "from b"
    assert outcomes(ex) == [outcome, "served"]


async def test_unreachable_links_are_named_by_cause(state) -> None:  # type: ignore[no-untyped-def]
    upstreams = Upstreams(a=failed_to_connect(socket.gaierror(-2, "unknown")), b=refused)
    with pytest.raises(ChainFailed) as failed:
        await answer_whole(state(upstreams), exchange(link("a"), link("b")))
    assert (failed.value.status, failed.value.code) == (502, "upstream_unreachable")
    assert failed.value.message.startswith(
        "No route in the chain could be reached (DNS lookup failed, connection refused).")


async def test_a_refusal_of_the_request_itself_ends_the_walk(state) -> None:  # type: ignore[no-untyped-def]
    upstreams = Upstreams(a=status(422), b=completion())
    ex = exchange(link("a"), link("b"))
    with pytest.raises(ChainFailed) as failed:
        await answer_whole(state(upstreams), ex)
    assert (failed.value.status, failed.value.code) == (400, "upstream_rejected")
    assert failed.value.message == "The upstream refused the request: x: status 422"  # the upstream's type and message
    assert outcomes(ex) == ["http_422"] and upstreams.calls["b"] == 0


@pytest.mark.parametrize(("failure", "outcome"), [
    (status(429), "rate_limited"),
    (refused, "connection_refused"),
    (timed_out, "timeout"),  # the transport's own read timeout
    (sse(finish=None, broken=True), "connection_lost"),  # lost before any token: nothing was sent
    (paced(b"data: {not json\n\n"), "malformed_response"),
    (paced(chunk(role="assistant")), "malformed_response"),  # ended without [DONE], before any token
])
async def test_a_streams_failed_link_yields_to_the_next_while_nothing_was_sent(state, failure: Behaviour,  # type: ignore[no-untyped-def]
                                                                              outcome: str) -> None:
    upstreams = Upstreams(a=failure, b=sse({"content": "from b"}))
    ex = exchange(link("a"), link("b"), stream=True)
    events = await streamed(state(upstreams), ex)
    assert [e["model"] for e in events[1:-2]] == ["model-b", "model-b"]
    assert events[1]["choices"][0]["delta"]["content"] == "from b"
    assert outcomes(ex) == [outcome, "served"]


# --- after the first token: no fallback, the stream ends with the error event -------------------------------


@pytest.mark.parametrize(("answer", "outcome"), [
    (paced(chunk(content="Hel"), b"data: {not json\n\n"), "malformed_response"),
    (paced(chunk(content="Hel")), "malformed_response"),  # ended without [DONE]
    (paced(chunk(content="Hel"), 5.0, chunk(content="lo"), DONE), "timeout"),  # silent past the idle limit
])
async def test_a_stream_that_fails_after_its_first_token_is_not_retried(state, monkeypatch,  # type: ignore[no-untyped-def]
                                                                       answer: Behaviour, outcome: str) -> None:
    monkeypatch.setattr(timeouts, "STREAM_IDLE_S", 0.2)
    upstreams = Upstreams(a=answer, b=sse({"content": "from b"}))
    ex = exchange(link("a"), link("b"), stream=True)
    events = await streamed(state(upstreams), ex)
    assert events[1]["choices"][0]["delta"]["content"] == "Hel"
    assert events[-2]["error"]["code"] == "failed_mid_stream"
    assert f"({outcome})" in events[-2]["error"]["message"] and events[-1] == "[DONE]"
    assert upstreams.calls["b"] == 0 and outcomes(ex) == [outcome]
    assert ex.outcome is not None and (ex.outcome.disposition, ex.outcome.error_code) == ("failed_mid_stream", outcome)


# --- the spec's budgets and the request's deadline ----------------------------------------------------------


async def test_a_stream_is_timed_to_its_first_token_not_to_its_end(state) -> None:  # type: ignore[no-untyped-def]
    """A long answer is never cut off for being long: the budget (here 500 ms) runs to the first token only."""
    answer = paced(chunk(content="a"), 0.25, chunk(content="b"), 0.25, chunk(content="c"), 0.25, DONE)
    ex = exchange(link("a"), stream=True, first_token_ms=500)
    events = await streamed(state(Upstreams(a=answer)), ex)
    assert "".join(e["choices"][0]["delta"].get("content") or "" for e in events[1:-2]) == "abc"
    assert outcomes(ex) == ["served"]


async def test_a_whole_answer_gets_at_least_the_spec_minimum_whatever_the_first_token_budget(state) -> None:  # type: ignore[no-untyped-def]
    """Not streamed, the first token comes with the whole answer: an attempt gets at least 60 s, not the
    policy's first-token budget (here 100 ms)."""
    upstreams = Upstreams(a=paced_completion(0.3), b=completion("from b"))
    ex = exchange(link("a"), link("b"), first_token_ms=100)
    answer = await answer_whole(state(upstreams), ex)
    assert answer["model"] == "model-a" and outcomes(ex) == ["served"]


async def test_a_whole_answer_slower_than_its_attempt_budget_yields_to_the_next(state, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(timeouts, "NONSTREAM_MIN_ATTEMPT_S", 0.1)  # the spec's 60 s, shortened
    upstreams = Upstreams(a=paced_completion(5.0), b=completion("from b"))
    ex = exchange(link("a"), link("b"), first_token_ms=1000)
    answer = await answer_whole(state(upstreams), ex)
    assert answer["model"] == "model-b" and outcomes(ex) == ["timeout", "served"]


@pytest.mark.parametrize("stream", [False, True])
async def test_no_link_is_tried_once_the_requests_deadline_has_passed(state, monkeypatch, stream: bool) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(timeouts, "NONSTREAM_MIN_ATTEMPT_S", 0.1)  # the spec's 60 s and 90 s, shortened
    monkeypatch.setattr(timeouts, "NONSTREAM_MIN_DEADLINE_S", 0.1)
    slow_a = paced(5.0, chunk(content="late"), DONE) if stream else paced_completion(5.0)
    upstreams = Upstreams(a=slow_a, b=completion(), c=completion())
    ex = exchange(link("a"), link("b"), link("c"), stream=stream, first_token_ms=300, total_deadline_ms=300)
    with pytest.raises(ChainFailed):
        if stream:
            await streamed(state(upstreams), ex)
        else:
            await answer_whole(state(upstreams), ex)
    assert outcomes(ex) == ["first_token_timeout" if stream else "timeout", "skipped_deadline"]
    assert upstreams.calls["b"] == upstreams.calls["c"] == 0


async def test_a_thinking_model_that_falls_silent_yields_to_the_next(state, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Not streamed, a thinking model's answer is read as a stream and fails only on silence (the spec's 30 s)."""
    monkeypatch.setattr(timeouts, "THINKING_SILENCE_S", 0.5)
    thinking = paced(chunk(reasoning_content="let me think"), 5.0, chunk(content="late"), DONE)
    upstreams = Upstreams(a=thinking, b=completion("from b"))
    ex = exchange(link("a", reasoning="always_on"), link("b"))
    answer = await answer_whole(state(upstreams), ex)
    assert answer["model"] == "model-b" and outcomes(ex) == ["timeout", "served"]


async def test_a_thinking_model_that_keeps_sending_is_not_cut_for_its_length(state, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Longer in all (0.8 s) than its first-token budget (300 ms), never silent for the silence limit (0.5 s)."""
    monkeypatch.setattr(timeouts, "THINKING_SILENCE_S", 0.5)
    thinking = paced(chunk(reasoning_content="a"), 0.2, chunk(reasoning_content="b"), 0.2, chunk(reasoning_content="c"),
                     0.2, chunk(reasoning_content="d"), 0.2, chunk(content="answer"), DONE)
    ex = exchange(link("a", reasoning="always_on"), link("b"), first_token_ms=300)
    answer = await answer_whole(state(Upstreams(a=thinking, b=completion("from b"))), ex)
    assert answer["model"] == "model-a" and answer["choices"][0]["message"]["content"] == "answer"
    assert outcomes(ex) == ["served"]


# --- the tool-loop rule: routing's chain, walked -----------------------------------------------------------


@pytest.mark.parametrize("tool_loop", [True, False])
async def test_a_tool_loop_falls_back_only_within_the_model_that_made_the_call(state, tool_loop: bool) -> None:  # type: ignore[no-untyped-def]
    models = [make_model(id="model-a", benchmarks={"chat": 0.9}), make_model(id="model-b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="model-a", provider="p1"), make_route(model_id="model-a", provider="p2"),
              make_route(model_id="model-b", provider="p3")]
    decision = decide_with(make_snapshot(models, routes), make_request(tool_loop=tool_loop))
    upstreams = Upstreams(p1=status(503), p2=status(503), p3=completion("from b"))
    ex = exchange(decision=decision)
    if tool_loop:
        with pytest.raises(ChainFailed) as failed:
            await answer_whole(state(upstreams), ex)
        assert failed.value.code == "upstream_error"
        assert outcomes(ex) == ["http_503", "http_503"] and upstreams.calls["p3"] == 0
    else:
        answer = await answer_whole(state(upstreams), ex)
        assert answer["model"] == "model-b" and outcomes(ex) == ["http_503", "http_503", "served"]
    assert json.dumps([a.route for a in ex.attempts]).startswith('["p1/model-a", "p2/model-a"')
