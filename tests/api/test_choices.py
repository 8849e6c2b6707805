"""n choices, whole and streamed: forwarded to an OpenAI-compatible upstream that makes several in one
call, made as n parallel calls on a Claude route (usage summed, billed as such), capped at 8."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from tests.live import decision_of, poll

OPENAI_ROUTE_MODEL = "meta-llama-3.3-70b"  # served by the simulated OpenAI wire, which takes n
CLAUDE_MODEL = "anthropic-claude-haiku-4.5"  # Anthropic has no n: one call per choice


def _ask(http: httpx.Client, model: str, tag: str, **body: object) -> httpx.Response:
    return http.post("/chat/completions", json={
        "model": model, "messages": [{"role": "user", "content": f"What is machine learning? [sim:tag={tag}]"}], **body})


def _stream(http: httpx.Client, model: str, tag: str, **body: object) -> list[dict]:
    events = []
    with http.stream("POST", "/chat/completions", json={
            "model": model, "stream": True, "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": f"What is machine learning? [sim:tag={tag}]"}], **body}) as response:
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line.startswith("data: {"):
                events.append(json.loads(line[6:]))
    return events


def _started(simulated_url: str, tag: str) -> int:
    return httpx.get(f"{simulated_url}/stats").json()["by_tag"].get(tag, {}).get("started", 0)


def _tag() -> str:
    return "n-" + uuid.uuid4().hex[:8]


@pytest.mark.parametrize(("model", "calls"), [(OPENAI_ROUTE_MODEL, 1), (CLAUDE_MODEL, 3)])
def test_n_choices_whole(http: httpx.Client, simulated_url: str, model: str, calls: int) -> None:
    tag = _tag()  # the same prompt (the simulated answer follows it), counted by the simulated upstream
    single = _ask(http, model, tag).json()
    response = _ask(http, model, tag, n=3)
    assert response.status_code == 200, response.text
    body = response.json()
    assert [c["index"] for c in body["choices"]] == [0, 1, 2]
    for choice in body["choices"]:
        assert choice["message"]["content"] == single["choices"][0]["message"]["content"]
        assert choice["finish_reason"] == "stop"
    usage, one = body["usage"], single["usage"]
    assert usage["completion_tokens"] == 3 * one["completion_tokens"]
    # One call asked for three choices reads the prompt once; three calls read it three times.
    assert usage["prompt_tokens"] == calls * one["prompt_tokens"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage["cost_micros"] > one["cost_micros"]
    assert _started(simulated_url, tag) == 1 + calls
    decision = poll(lambda: decision_of(http, body["id"]))
    (attempt,) = decision["attempts"]
    assert attempt["outcome"] == "served"
    assert attempt.get("calls", 1) == calls


def test_n_choices_on_a_claude_route_are_billed_as_n_calls(http: httpx.Client) -> None:
    tag = _tag()
    single = _ask(http, CLAUDE_MODEL, tag).json()["usage"]["cost_micros"]
    triple = _ask(http, CLAUDE_MODEL, tag, n=3).json()["usage"]["cost_micros"]
    assert single > 0
    assert abs(triple - 3 * single) <= 2  # the price of the summed tokens, rounded once


@pytest.mark.parametrize(("model", "calls"), [(OPENAI_ROUTE_MODEL, 1), (CLAUDE_MODEL, 2)])
def test_n_choices_streamed(http: httpx.Client, simulated_url: str, model: str, calls: int) -> None:
    tag = _tag()
    single = _stream(http, model, tag)
    single_text = "".join(c["choices"][0]["delta"].get("content") or "" for c in single
                          if c["object"] == "chat.completion.chunk" and c["choices"])
    events = _stream(http, model, tag, n=2)
    assert events[0]["object"] == "routing" and events[-1]["object"] == "usage"
    chunks = [e for e in events if e["object"] == "chat.completion.chunk"]
    texts: dict[int, str] = {}
    finishes: dict[int, str] = {}
    for chunk in chunks[:-1]:
        for choice in chunk["choices"]:
            texts[choice["index"]] = texts.get(choice["index"], "") + (choice["delta"].get("content") or "")
            if choice["finish_reason"]:
                finishes[choice["index"]] = choice["finish_reason"]
    assert texts == {0: single_text, 1: single_text}
    assert finishes == {0: "stop", 1: "stop"}
    usage, one = chunks[-1]["usage"], single[-2]["usage"]
    assert chunks[-1]["choices"] == []
    assert usage["completion_tokens"] == 2 * one["completion_tokens"]
    assert usage["prompt_tokens"] == calls * one["prompt_tokens"]
    assert _started(simulated_url, tag) == 1 + calls


def test_sdk_reads_n_choices(sdk) -> None:  # type: ignore[no-untyped-def]
    response = sdk.chat.completions.create(model=CLAUDE_MODEL, n=2,
                                           messages=[{"role": "user", "content": "What is machine learning?"}])
    assert [c.index for c in response.choices] == [0, 1]
    assert all(c.message.content.startswith(f"[simulated {CLAUDE_MODEL}]") for c in response.choices)


def test_a_failed_call_of_a_fan_out_fails_the_attempt(http: httpx.Client) -> None:
    response = _ask(http, CLAUDE_MODEL, _tag(), n=2, messages=[{"role": "user", "content": "Hi [sim:fail=503]"}])
    assert response.status_code == 502
    assert response.json()["error"]["code"] == "upstream_error"


def test_n_above_the_cap_is_a_400_that_says_the_limit(http: httpx.Client) -> None:
    response = _ask(http, OPENAI_ROUTE_MODEL, _tag(), n=9)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "n"
    assert "8" in error["message"]


def test_n_choices_each_get_their_structured_output_report(http: httpx.Client) -> None:
    # The simulated Gemini Flash wraps its JSON in a fence: each choice is taken out and reported.
    response = http.post("/chat/completions", json={
        "model": "google-gemini-2.5-flash", "response_format": {"type": "json_object"}, "extended_thinking": False,
        "n": 2, "messages": [{"role": "user", "content": "Give me a JSON object describing a cat."}]})
    assert response.status_code == 200, response.text
    body = response.json()
    assert [isinstance(json.loads(c["message"]["content"]), dict) for c in body["choices"]] == [True, True]
    assert body["usage"]["structured_output_repair"] == [{"applied": True, "method": "code_fence"}] * 2


def test_a_client_leaving_a_fanned_out_stream_cancels_every_call(http: httpx.Client, simulated_url: str) -> None:
    tag = _tag()
    payload = {"model": CLAUDE_MODEL, "stream": True, "n": 2,
               "messages": [{"role": "user", "content": f"Tell me a story [sim:tag={tag}] [sim:idle_ms=5000] [sim:tokens=80]"}]}
    with http.stream("POST", "/chat/completions", json=payload) as response:
        for line in response.iter_lines():
            if '"chat.completion.chunk"' in line:
                break
    stats = poll(lambda: (s := httpx.get(f"{simulated_url}/stats").json()["by_tag"].get(tag)) and s["cancelled"] == 2 and s)
    assert stats["completed"] == 0
