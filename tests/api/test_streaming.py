"""Streamed chat completions over a real socket: event order, SDK compatibility, keepalive, errors,
fallback before the first token and never after, content_filter, client disconnect."""

from __future__ import annotations

import json

import httpx

from tests.live import decision_of, fail_the_first_pick, poll


def _events(http: httpx.Client, **body: object) -> tuple[list[object], list[str]]:
    """Return the parsed data events (with "[DONE]" as a string) and the raw comment lines."""
    payload = {"model": "auto", "stream": True, "messages": [{"role": "user", "content": "Write a haiku about routers"}], **body}
    events: list[object] = []
    comments: list[str] = []
    with http.stream("POST", "/chat/completions", json=payload) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["x-accel-buffering"] == "no"
        for line in response.iter_lines():
            if line.startswith(":"):
                comments.append(line)
            elif line.startswith("data: "):
                data = line[6:]
                events.append(data if data == "[DONE]" else json.loads(data))
    return events, comments


def test_stream_events_come_in_the_documented_order(http: httpx.Client) -> None:
    events, _ = _events(http)
    assert events[0]["object"] == "routing"
    assert events[-1] == "[DONE]"
    usage = events[-2]
    assert usage["object"] == "usage"
    assert {"cost_micros", "latency_ms", "ttft_ms"} <= set(usage)
    chunks = events[1:-2]
    assert chunks and all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert all(c["model"] == events[0]["model"] for c in chunks)
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    assert text.startswith(f"[simulated {events[0]['model']}]")


def test_inferbase_events_are_shaped_as_chunks_with_an_empty_delta(http: httpx.Client) -> None:
    # Client loops read chunk.choices[0].delta on every data line, and take the response id and
    # timestamp from the first one: both events carry one empty choice, the request id and created.
    events, _ = _events(http)
    routing, usage = events[0], events[-2]
    request_id = usage["id"]
    assert request_id.startswith("req-")
    for event in (routing, usage):
        assert event["choices"] == [{"index": 0, "delta": {}, "finish_reason": None}]
        assert event["id"] == request_id
        assert isinstance(event["created"], int) and event["created"] == events[1]["created"]
        assert event["model"]
    assert {"task", "decisiveness", "routing_time_ms"} <= set(routing)
    assert all(c["id"] == request_id for c in events[1:-2])


def test_usage_event_carries_cost_and_timing_at_its_top_level_and_no_token_counts(http: httpx.Client) -> None:
    events, _ = _events(http)
    usage = events[-2]
    assert "usage" not in usage
    assert isinstance(usage["cost_micros"], int)
    assert isinstance(usage["latency_ms"], int) and isinstance(usage["ttft_ms"], int)
    assert usage["ttft_ms"] <= usage["latency_ms"]


def test_usage_event_reports_dropped_params_at_its_top_level(http: httpx.Client) -> None:
    events, _ = _events(http, metadata={"team": "a"})
    assert events[-2]["dropped_params"] == ["metadata"]


def test_stream_is_read_by_the_openai_sdk_documented_loop(sdk) -> None:  # type: ignore[no-untyped-def]
    # OpenAI's documented loop, with no guard on chunk.choices.
    stream = sdk.chat.completions.create(
        model="auto", stream=True, messages=[{"role": "user", "content": "Write a haiku about routers"}]
    )
    text = ""
    finishes = []
    for chunk in stream:
        text += chunk.choices[0].delta.content or ""
        finishes.append(chunk.choices[0].finish_reason)
    assert text.startswith("[simulated ")
    assert "stop" in finishes


def test_stream_with_include_usage_counts_usage_once_in_the_sdk(sdk) -> None:  # type: ignore[no-untyped-def]
    stream = sdk.chat.completions.create(
        model="auto", stream=True, stream_options={"include_usage": True},
        messages=[{"role": "user", "content": "Write a haiku about routers"}],
    )
    text = ""
    usages = []
    for chunk in stream:
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
        if chunk.usage:
            usages.append(chunk.usage)
    assert text.startswith("[simulated ")
    assert len(usages) == 1
    usage = usages[0]
    assert usage.completion_tokens > 0 and usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert isinstance(usage.model_extra["cost_micros"], int)


def test_stream_is_read_by_the_openai_sdk_stream_helper(sdk) -> None:  # type: ignore[no-untyped-def]
    with sdk.chat.completions.stream(
        model="auto", messages=[{"role": "user", "content": "Write a haiku about routers"}],
        stream_options={"include_usage": True},
    ) as stream:
        deltas = [event.delta for event in stream if event.type == "content.delta"]
        final = stream.get_final_completion()
    assert "".join(deltas).startswith("[simulated ")
    assert final.id.startswith("req-")
    assert final.choices[0].message.content == "".join(deltas)
    assert final.choices[0].finish_reason == "stop"
    assert final.usage is not None and final.usage.completion_tokens > 0


def test_stream_include_usage_adds_the_openai_usage_chunk(http: httpx.Client) -> None:
    events, _ = _events(http, stream_options={"include_usage": True})
    openai_usage = events[-3]
    assert openai_usage["object"] == "chat.completion.chunk"
    assert openai_usage["choices"] == []
    assert openai_usage["usage"]["total_tokens"] > 0
    assert openai_usage["usage"]["cost_micros"] == events[-2]["cost_micros"]
    assert openai_usage["usage"]["latency_ms"] == events[-2]["latency_ms"]


def test_stream_without_include_usage_has_no_openai_usage_chunk(http: httpx.Client) -> None:
    events, _ = _events(http)
    assert not any(isinstance(e, dict) and "usage" in e for e in events)


def test_stream_sends_processing_comments_while_the_upstream_is_silent(http: httpx.Client) -> None:
    # The live gateway runs with a 0.3 s keepalive interval; the upstream pauses 1.5 s mid-answer.
    events, comments = _events(http, messages=[{"role": "user", "content": "Say hello [sim:idle_ms=1500]"}])
    assert ": processing" in comments
    assert events[-1] == "[DONE]"


def test_stream_whose_chain_fails_before_anything_is_sent_answers_with_the_status(http: httpx.Client) -> None:
    # Every route refuses before the first token: the same status and envelope as when not streamed.
    body = {"model": "meta-llama-3.3-70b", "messages": [{"role": "user", "content": "Say hello [sim:fail=503]"}]}
    whole = http.post("/chat/completions", json=body)
    with http.stream("POST", "/chat/completions", json={**body, "stream": True}) as response:
        streamed = response.read()
        assert response.status_code == whole.status_code == 502
        assert response.headers["content-type"] == "application/json"
        request_id = response.headers["x-request-id"]
    error = json.loads(streamed)["error"]
    assert error["code"] == whole.json()["error"]["code"] == "upstream_error"
    assert error["type"] == "upstream_error"
    decision = poll(lambda: decision_of(http, request_id))
    assert [a["outcome"] for a in decision["attempts"]] == ["http_503"]
    assert decision["final_disposition"] == "upstream_error"


def test_stream_refused_as_a_bad_request_is_answered_as_when_not_streamed(http: httpx.Client) -> None:
    body = {"model": "meta-llama-3.3-70b", "messages": [{"role": "user", "content": "Say hello [sim:fail=400]"}]}
    whole = http.post("/chat/completions", json=body)
    streamed = http.post("/chat/completions", json={**body, "stream": True})
    assert streamed.status_code == whole.status_code == 400
    assert streamed.json()["error"]["code"] == whole.json()["error"]["code"] == "upstream_rejected"


def test_stream_whose_first_token_budget_passes_everywhere_is_a_504(http: httpx.Client) -> None:
    # The budget (0.1 s) passes well before the keepalive interval (0.3 s) would start the stream.
    with http.stream("POST", "/chat/completions", json={
            "model": "meta-llama-3.3-70b", "stream": True, "routing": {"first_token_timeout_ms": 100},
            "messages": [{"role": "user", "content": "Say hello [sim:stall_ms=3000]"}]}) as response:
        body = json.loads(response.read())
        assert response.status_code == 504
    assert body["error"]["code"] == "upstream_timeout"


def test_sdk_raises_its_status_error_for_a_stream_that_fails_before_the_first_token(sdk) -> None:  # type: ignore[no-untyped-def]
    import openai

    try:
        stream = sdk.chat.completions.create(
            model="meta-llama-3.3-70b", stream=True, messages=[{"role": "user", "content": "Say hello [sim:fail=429]"}])
        list(stream)
    except openai.APIStatusError as exc:
        error = exc
    else:
        raise AssertionError("the SDK raised nothing")
    assert isinstance(error, openai.InternalServerError)
    assert error.status_code == 502
    assert error.body["code"] == "upstream_error"
    assert error.response.headers["x-request-id"].startswith("req-")


def test_slow_first_token_starts_the_stream_with_the_routing_event_then_keepalives(http: httpx.Client) -> None:
    # The upstream takes 1.2 s to answer at all; the keepalive interval is 0.3 s, so the stream starts
    # (routing event first) and keeps the connection alive while the first token is awaited.
    lines = []
    with http.stream("POST", "/chat/completions", json={
            "model": "meta-llama-3.3-70b", "stream": True, "routing": {"first_token_timeout_ms": 10000},
            "messages": [{"role": "user", "content": "Say hello [sim:stall_ms=1200]"}]}) as response:
        assert response.status_code == 200
        lines = [line for line in response.iter_lines() if line]
    assert json.loads(lines[0][6:])["object"] == "routing"
    first_chunk = next(i for i, line in enumerate(lines) if '"chat.completion.chunk"' in line)
    assert ": processing" in lines[1:first_chunk]
    assert lines[-1] == "data: [DONE]"


def test_failure_after_a_keepalive_started_the_stream_is_an_error_event(http: httpx.Client) -> None:
    events, comments = _events(http, model="meta-llama-3.3-70b", routing={"first_token_timeout_ms": 10000},
                               messages=[{"role": "user", "content": "Say hello [sim:stall_ms=1200] [sim:fail=503]"}])
    assert ": processing" in comments
    assert events[0]["object"] == "routing"
    assert events[-2]["object"] == "error" and events[-2]["error"]["code"] == "upstream_error"
    assert events[-1] == "[DONE]"


def _streamed(http: httpx.Client, streams: list[list[object]], **body: object):  # type: ignore[no-untyped-def]
    """A `send` for fail_the_first_pick: stream a haiku request with the directive; keep its events."""

    def send(directive: str) -> dict:
        events, _ = _events(http, messages=[{"role": "user", "content": f"Write a haiku about routers {directive}"}],
                            **body)
        streams.append(events)
        return {"model": events[1]["model"], "id": events[-2]["id"]}

    return send


def test_stream_falls_back_before_the_first_token(http: httpx.Client) -> None:
    streams: list[list[object]] = []
    failing, served, decision = fail_the_first_pick(http, _streamed(http, streams))
    assert served["model"] not in failing
    assert streams[-1][-2]["object"] == "usage"
    assert [a["outcome"] for a in decision["attempts"]][:1] == ["http_503"]


def test_stream_falls_back_when_the_first_token_budget_passes(http: httpx.Client) -> None:
    streams: list[list[object]] = []
    send = _streamed(http, streams, routing={"first_token_timeout_ms": 300})
    failing, served, decision = fail_the_first_pick(http, send, fault="stall_ms=3000", outcome="first_token_timeout")
    assert served["model"] not in failing
    assert decision["attempts"][0]["outcome"] == "first_token_timeout"


def test_stream_failure_after_the_first_token_is_an_error_event_not_a_fallback(http: httpx.Client) -> None:
    events, _ = _events(http, model="meta-llama-3.3-70b",
                        messages=[{"role": "user", "content": "Tell me a long story [sim:fail_at_chunk=2] [sim:tokens=200]"}])
    assert events[-1] == "[DONE]"
    error = events[-2]
    assert error["object"] == "error"
    assert error["error"]["code"] == "failed_mid_stream"
    served = {e["model"] for e in events if isinstance(e, dict) and e.get("object") == "chat.completion.chunk"}
    assert served == {"meta-llama-3.3-70b"}


def test_stream_content_filter_is_passed_on_and_not_retried(http: httpx.Client) -> None:
    events, _ = _events(http, model="meta-llama-3.3-70b", messages=[{"role": "user", "content": "Do the thing [sim:refuse]"}])
    chunks = [e for e in events if isinstance(e, dict) and e.get("object") == "chat.completion.chunk"]
    assert chunks[-1]["choices"][0]["finish_reason"] == "content_filter"
    decision = poll(lambda: decision_of(http, events[-2]["id"]))
    assert [a["outcome"] for a in decision["attempts"]] == ["served"]


def test_tool_loop_falls_back_only_within_the_model_that_made_the_call(http: httpx.Client) -> None:
    messages = [
        {"role": "user", "content": "What's the weather in Paris? [sim:fail=503]"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "18C and sunny"},
    ]
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]
    response = http.post("/chat/completions", json={"model": "auto", "messages": messages, "tools": tools})
    assert response.status_code == 502
    # Every attempt was the same model (its routes), never another model.
    assert response.json()["error"]["message"].count("/") >= 1
    routes = [part.split(":")[0].strip() for part in response.json()["error"]["message"].split("Attempts:")[1].split(";")]
    assert len({r.split("/", 1)[1] for r in routes}) == 1


def test_client_disconnect_cancels_the_upstream_and_is_logged(simulated_url: str, http: httpx.Client) -> None:
    tag = "disconnect-test"
    payload = {"model": "meta-llama-3.3-70b", "stream": True,
               "messages": [{"role": "user", "content": f"Tell me a story [sim:tag={tag}] [sim:idle_ms=5000] [sim:tokens=80]"}]}
    request_id = None
    with http.stream("POST", "/chat/completions", json=payload) as response:
        for line in response.iter_lines():
            if line.startswith("data: ") and '"chat.completion.chunk"' in line:
                request_id = json.loads(line[6:])["id"]
                break
    # Leaving the block closed the connection mid-answer.
    stats = poll(lambda: (s := httpx.get(f"{simulated_url}/stats").json()["by_tag"].get(tag)) and s["cancelled"] and s)
    assert stats["cancelled"] == 1 and stats["completed"] == 0
    decision = poll(lambda: decision_of(http, request_id))
    assert decision["final_disposition"] == "client_disconnected"


def test_stream_through_the_anthropic_adapter(http: httpx.Client) -> None:
    events, _ = _events(http, model="anthropic-claude-haiku-4.5", extended_thinking=True, max_tokens=3000,
                        stream_options={"include_usage": True})
    chunks = [e for e in events if isinstance(e, dict) and e.get("object") == "chat.completion.chunk"]
    assert chunks[-1]["usage"]["completion_tokens"] > 0
    chunks = chunks[:-1]
    reasoning = "".join(c["choices"][0]["delta"].get("reasoning_content") or "" for c in chunks if c["choices"])
    content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert reasoning
    assert content.startswith("[simulated anthropic-claude-haiku-4.5]")
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_anthropic_tool_call_comes_back_openai_shaped(http: httpx.Client) -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    response = http.post("/chat/completions", json={
        "model": "anthropic-claude-haiku-4.5", "tools": tools,
        "messages": [{"role": "user", "content": "Weather in Paris? [sim:tool_call]"}]})
    assert response.status_code == 200, response.text
    choice = response.json()["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    call = choice["message"]["tool_calls"][0]
    assert call["function"]["name"] == "get_weather"
    assert "city" in json.loads(call["function"]["arguments"])


def test_stream_chunks_are_written_as_they_arrive(http: httpx.Client) -> None:
    # The upstream pauses mid-answer; the keepalive comments sent during the pause must come after
    # content already delivered, which only happens when nothing buffers the stream.
    order = []
    payload = {"model": "meta-llama-3.3-70b", "stream": True,
               "messages": [{"role": "user", "content": "Tell me a story [sim:idle_ms=1200] [sim:tokens=60]"}]}
    with http.stream("POST", "/chat/completions", json=payload) as response:
        for line in response.iter_lines():
            if line.startswith(":"):
                order.append("keepalive")
            elif '"content"' in line and '"chat.completion.chunk"' in line and '"content":""' not in line:
                order.append("content")
    assert "keepalive" in order
    first_keepalive = order.index("keepalive")
    assert "content" in order[:first_keepalive]
    assert "content" in order[first_keepalive:]
