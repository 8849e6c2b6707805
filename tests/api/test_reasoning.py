"""Reasoning as the spec words it: reasoning_content, thinking counts toward max_tokens, truncation,
extended_thinking false, models that reason regardless."""

from __future__ import annotations

import json

import httpx

from inferbase.api.validation import chat_request_parse
from tests.live import LiveGateway, decision_of, poll

QUESTION = [{"role": "user", "content": "Prove that there are infinitely many primes."}]


def _events(http: httpx.Client, body: dict) -> list[object]:
    events: list[object] = []
    with http.stream("POST", "/chat/completions", json={"stream": True, **body}) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("data: "):
                events.append(line[6:] if line[6:] == "[DONE]" else json.loads(line[6:]))
    return events


def test_reasoning_arrives_beside_the_content_and_is_counted(http: httpx.Client) -> None:
    body = http.post("/chat/completions", json={"model": "openai-gpt-oss-120b", "messages": QUESTION, "max_tokens": 2000}).json()
    message = body["choices"][0]["message"]
    assert message["reasoning_content"] and message["content"]
    assert body["usage"]["completion_tokens_details"]["reasoning_tokens"] > 0
    assert body["routing"]["thinking"] == "on"


def test_budget_spent_reasoning_ends_with_length_and_the_truncated_hint(http: httpx.Client) -> None:
    body = http.post("/chat/completions", json={"model": "openai-gpt-oss-120b", "messages": QUESTION, "max_tokens": 50}).json()
    choice = body["choices"][0]
    assert choice["finish_reason"] == "length"
    assert choice["message"]["reasoning_content"] and not choice["message"]["content"]
    assert body["routing"]["truncated"] == "max_tokens"
    assert "max_tokens" in body["routing"]["truncated_hint"]
    assert body["usage"]["completion_tokens"] <= 50  # the limit is never raised for the client


def test_model_that_reasons_regardless_says_model_ignores_off(http: httpx.Client) -> None:
    body = http.post("/chat/completions", json={"model": "openai-gpt-oss-120b", "messages": QUESTION,
                                                "max_tokens": 2000, "extended_thinking": False}).json()
    assert body["routing"]["thinking"] == "on"
    assert body["routing"]["thinking_reason"] == "model_ignores_off"
    assert body["choices"][0]["message"]["reasoning_content"]


def test_extended_thinking_false_turns_a_switchable_model_off(http: httpx.Client) -> None:
    body = http.post("/chat/completions", json={"model": "qwen3-32b", "messages": QUESTION, "max_tokens": 2000,
                                                "extended_thinking": False}).json()
    assert body["routing"]["thinking"] == "off"
    assert "reasoning_content" not in body["choices"][0]["message"]
    assert body["usage"]["completion_tokens_details"]["reasoning_tokens"] == 0


def test_extended_thinking_false_on_claude_sends_no_thinking(http: httpx.Client) -> None:
    on = http.post("/chat/completions", json={"model": "anthropic-claude-haiku-4.5", "messages": QUESTION,
                                              "max_tokens": 3000, "extended_thinking": True}).json()
    off = http.post("/chat/completions", json={"model": "anthropic-claude-haiku-4.5", "messages": QUESTION,
                                               "max_tokens": 3000, "extended_thinking": False}).json()
    assert on["choices"][0]["message"].get("reasoning_content")
    assert not off["choices"][0]["message"].get("reasoning_content")


def test_answer_cut_off_before_content_is_a_failed_attempt_on_auto(http: httpx.Client) -> None:
    # qwen3-32b ranks first on quality and thinks (the client asked); 100 tokens end it mid-reasoning.
    body = http.post("/chat/completions", json={
        "model": "auto", "messages": QUESTION, "max_tokens": 100, "extended_thinking": True,
        "routing": {"model_pool": ["qwen3-32b", "openai-gpt-4.1-mini"], "optimize": "quality"}}).json()
    assert body["routing"]["model"] == "qwen3-32b"
    assert body["model"] == "openai-gpt-4.1-mini"
    assert body["choices"][0]["message"]["content"]
    decision = poll(lambda: decision_of(http, body["id"]))
    assert [a["outcome"] for a in decision["attempts"]] == ["no_content_before_limit", "served"]


def test_streamed_reasoning_is_sent_as_produced_and_truncation_is_on_the_usage_event(http: httpx.Client) -> None:
    events = _events(http, {"model": "openai-gpt-oss-120b", "messages": QUESTION, "max_tokens": 50})
    chunks = [e for e in events if isinstance(e, dict) and e.get("object") == "chat.completion.chunk"]
    assert any(c["choices"][0]["delta"].get("reasoning_content") for c in chunks if c["choices"])
    assert not any(c["choices"][0]["delta"].get("content") for c in chunks if c["choices"])
    usage = events[-2]
    assert usage["object"] == "usage"
    assert usage["truncated"] == "max_tokens" and usage["truncated_hint"]


def test_streamed_reasoning_only_answer_with_thinking_off_is_a_failed_attempt(http: httpx.Client) -> None:
    # gpt-oss reasons whatever it is told; with extended_thinking false its reasoning is held, and an
    # answer that ends with reasoning only fails over (here to nothing else: the model was named).
    # Nothing was sent before it failed, so it is answered as when not streamed.
    response = http.post("/chat/completions", json={"model": "openai-gpt-oss-120b", "messages": QUESTION, "max_tokens": 50,
                                                    "extended_thinking": False, "stream": True})
    assert response.status_code == 502
    assert response.headers["content-type"] == "application/json"
    decision = poll(lambda: decision_of(http, response.headers["x-request-id"]))
    assert [a["outcome"] for a in decision["attempts"]] == ["no_content_before_limit"]


def test_streamed_held_reasoning_is_sent_ahead_of_the_content(http: httpx.Client) -> None:
    events = _events(http, {"model": "openai-gpt-oss-120b", "messages": QUESTION, "max_tokens": 2000, "extended_thinking": False})
    deltas = [c["choices"][0]["delta"] for c in events if isinstance(c, dict) and c.get("object") == "chat.completion.chunk" and c["choices"]]
    kinds = ["r" if d.get("reasoning_content") else "c" for d in deltas if d.get("reasoning_content") or d.get("content")]
    assert kinds[0] == "r" and "c" in kinds
    assert "".join(kinds).rstrip("c").count("c") == 0  # all reasoning first, then the answer


def test_reasoning_content_sent_back_is_accepted_and_not_forwarded() -> None:
    chat = chat_request_parse({"model": "auto", "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello", "reasoning_content": "they greeted me"},
        {"role": "user", "content": "how are you"}]})
    assert all("reasoning_content" not in m for m in chat.messages)
    assert chat.messages[1] == {"role": "assistant", "content": "hello"}


def test_cut_off_answer_is_served_when_every_later_model_fails(http: httpx.Client) -> None:
    body = http.post("/chat/completions", json={
        "model": "auto", "max_tokens": 100, "extended_thinking": True,
        "messages": [{"role": "user", "content": "Prove that there are infinitely many primes. "
                                                 "[sim:fail=503@openai-gpt-4.1-mini]"}],
        "routing": {"model_pool": ["qwen3-32b", "openai-gpt-4.1-mini"], "optimize": "quality"}}).json()
    assert body["model"] == "qwen3-32b"
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["routing"]["truncated"] == "max_tokens"
    decision = poll(lambda: decision_of(http, body["id"]))
    assert [a["outcome"] for a in decision["attempts"]] == ["served_truncated", "http_503"]


def test_claude_left_to_its_default_is_reported_off_and_does_not_think(http: httpx.Client) -> None:
    # No thinking request on a named model: Claude's default, as the Anthropic API serves it, is off.
    body = {"model": "anthropic-claude-haiku-4.5", "messages": QUESTION}
    answer = http.post("/chat/completions", json=body).json()
    assert answer["routing"]["thinking"] == "off" and "thinking_reason" not in answer["routing"]
    assert not answer["choices"][0]["message"].get("reasoning_content")
    routing = _events(http, body)[0]
    assert routing["object"] == "routing" and routing["thinking"] == "off"  # type: ignore[index]


def test_a_user_added_model_of_unmeasured_reasoning_has_no_thinking_mode(live: LiveGateway,
                                                                           simulated_url: str,
                                                                           http: httpx.Client) -> None:
    # The upstream model reasons whatever it is told; the user did not declare it, so the mode is not known.
    def answer(model: str) -> dict | None:
        response = http.post("/chat/completions", json={"model": model, "messages": QUESTION, "max_tokens": 2000})
        return response.json() if response.status_code == 200 else None

    try:
        live.manage("add_provider", "--name", "my-reasoning-server", "--base-url", f"{simulated_url}/openai/v1",
                    "--model", "my-reasoner=openai-gpt-oss-120b")
        unmeasured = poll(lambda: answer("my-reasoner"))
        assert unmeasured["choices"][0]["message"]["reasoning_content"]
        assert "thinking" not in unmeasured["routing"] and "thinking_reason" not in unmeasured["routing"]
        # Declared, the mode is known.
        live.manage("add_provider", "--name", "my-declared-server", "--base-url", f"{simulated_url}/openai/v1",
                    "--model", "my-declared-reasoner=openai-gpt-oss-120b", "--reasoning", "always_on")
        declared = poll(lambda: answer("my-declared-reasoner"))
        assert declared["choices"][0]["message"]["reasoning_content"]
        assert declared["routing"]["thinking"] == "on"
    finally:
        live.remove_provider("my-reasoning-server")
        live.remove_provider("my-declared-server")


def test_thinking_on_claude_never_raises_max_tokens(http: httpx.Client) -> None:
    # 500 tokens leave no room for Anthropic's 1024-token minimum budget: thinking is off, and says why.
    body = {"model": "anthropic-claude-sonnet-4.5", "messages": QUESTION, "max_tokens": 500,
            "extended_thinking": True}
    answer = http.post("/chat/completions", json=body).json()
    assert answer["usage"]["completion_tokens"] <= 500
    assert (answer["routing"]["thinking"], answer["routing"]["thinking_reason"]) == ("off", "max_tokens")
    assert not answer["choices"][0]["message"].get("reasoning_content")
    events = _events(http, {**body, "stream_options": {"include_usage": True}})
    assert events[0]["thinking"] == "off"  # type: ignore[index]
    usage = next(e for e in events if isinstance(e, dict) and e.get("usage"))  # OpenAI's include_usage chunk
    assert usage["usage"]["completion_tokens"] <= 500
    # With room, Claude thinks within the limit the client set.
    roomy = http.post("/chat/completions", json={**body, "max_tokens": 2000}).json()
    assert roomy["routing"]["thinking"] == "on" and roomy["choices"][0]["message"]["reasoning_content"]
    assert roomy["usage"]["completion_tokens"] <= 2000


def test_reasoning_effort_on_claude_sets_the_budget_or_is_reported_dropped(http: httpx.Client) -> None:
    def ask(**fields: object) -> dict:
        body = {"model": "anthropic-claude-sonnet-4.5", "messages": QUESTION, "max_tokens": 4000, **fields}
        return http.post("/chat/completions", json=body).json()

    low = ask(extended_thinking=True, reasoning_effort="low")
    high = ask(extended_thinking=True, reasoning_effort="high")
    for answer in (low, high):
        assert "reasoning_effort" not in answer["usage"].get("dropped_params", [])
        assert answer["usage"]["completion_tokens"] <= 4000
    # A low effort is a smaller budget: the simulated Claude reasons up to its budget.
    low_reasoning = low["choices"][0]["message"]["reasoning_content"]
    assert len(low_reasoning) < len(high["choices"][0]["message"]["reasoning_content"])
    off = ask(extended_thinking=False, reasoning_effort="high")
    assert "reasoning_effort" in off["usage"]["dropped_params"]
