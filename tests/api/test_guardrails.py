"""Guardrail checks over the live gateway: a policy's input checks redact what the upstream receives (read from the
simulated upstream's request log) or block before any upstream call; its output checks redact or block whole and
streamed answers; results and prices are on the log record and in the request's cost."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import orjson

from tests.live import LiveGateway, poll

MODEL = "openai-gpt-4.1-mini"


def _key(live: LiveGateway, guardrails: dict[str, Any]) -> str:
    name = f"guard-{uuid.uuid4().hex[:8]}"
    return live.create_key(org=name, policy=name, guardrails=guardrails)


def _client(live: LiveGateway, key: str) -> httpx.Client:
    return httpx.Client(base_url=live.api, headers={"Authorization": f"Bearer {key}"}, timeout=30)


def _received(simulated_url: str, tag: str) -> list[dict[str, Any]]:
    return httpx.get(f"{simulated_url}/debug/requests", params={"tag": tag}).json()["data"]


def _logged(live: LiveGateway, request_id: str) -> dict | None:
    out = live.shell("import json; from observability.models import RequestLog; "
                     f"r = RequestLog.objects.filter(request_id={request_id!r}).values('cost_micros', 'cost_breakdown', "
                     "'guardrails').first(); print(json.dumps(r))")
    return json.loads(out)


def _ask(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": text}], **extra}


def _streamed(http: httpx.Client, body: dict[str, Any]) -> tuple[str, list[dict[str, Any]], str]:
    """Return the streamed content, the events, and the request id."""
    events: list[dict[str, Any]] = []
    with http.stream("POST", "/chat/completions", json={**body, "stream": True}) as response:
        assert response.status_code == 200
        request_id = response.headers["x-request-id"]
        for line in response.iter_lines():
            if line.startswith("data: {"):
                events.append(orjson.loads(line[6:]))
    content = "".join(c["delta"].get("content") or "" for e in events if e.get("object") == "chat.completion.chunk"
                      for c in e["choices"])
    return content, events, request_id


def test_input_redaction_reaches_the_upstream_redacted_and_is_charged(live: LiveGateway, simulated_url: str) -> None:
    key = _key(live, {"input": [{"check": "pii", "action": "redact", "price_micros": 50, "kinds": ["email"]}]})
    with _client(live, key) as http:
        def redacted() -> httpx.Response | None:
            tag = uuid.uuid4().hex[:10]
            response = http.post("/chat/completions", json=_ask(f"Write to ada@example.com today [sim:tag={tag}]"))
            sent = _received(simulated_url, tag)[0]["body"]["messages"][-1]["content"]
            return response if "[REDACTED:email]" in sent and "ada@example.com" not in sent else None

        response = poll(redacted, timeout=20)  # the policy reaches the gateway with its next snapshot
    assert response.status_code == 200
    logged = poll(lambda: _logged(live, response.json()["id"]), timeout=20)
    assert logged["guardrails"] == [{"check": "pii", "where": "input", "action": "redact", "count": 1,
                                     "kinds": {"email": 1}}]
    assert logged["cost_breakdown"]["guardrails"] == [{"check": "pii", "where": "input", "price_micros": 50}]
    assert logged["cost_micros"] == response.json()["usage"]["cost_micros"] == logged["cost_breakdown"]["cost_micros"]
    assert logged["cost_breakdown"]["guardrail_micros"] == 50


def test_an_input_block_is_a_400_naming_the_check_and_no_upstream_call(live: LiveGateway, simulated_url: str) -> None:
    key = _key(live, {"input": [{"check": "secrets", "action": "block", "price_micros": 20}]})
    secret = "sk-proj-" + "a1B2c3D4e5" * 4
    with _client(live, key) as http:
        poll(lambda: http.post("/chat/completions", json=_ask(f"use {secret}")).status_code == 400, timeout=20)
        tag = uuid.uuid4().hex[:10]
        response = http.post("/chat/completions", json=_ask(f"my key is {secret} [sim:tag={tag}]"))
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["param"], error["type"]) == ("guardrail_blocked", "messages", "invalid_request_error")
    assert "'secrets'" in error["message"] and "openai_key" in error["message"]
    assert _received(simulated_url, tag) == []
    logged = poll(lambda: _logged(live, response.headers["x-request-id"]), timeout=20)
    assert logged["guardrails"][0]["action"] == "block" and logged["cost_micros"] == 20  # the check is charged


def test_output_redaction_whole_and_streamed(live: LiveGateway) -> None:
    # Every simulated answer starts with "[simulated <model>]".
    key = _key(live, {"output": [{"check": "blocklist", "action": "redact", "price_micros": 7}],
                      "blocklist": ["simulated"]})
    with _client(live, key) as http:
        whole = poll(lambda: "[REDACTED:blocklist]" in (r := http.post(
            "/chat/completions", json=_ask("Tell me about routers"))).json()["choices"][0]["message"]["content"] and r,
            timeout=20)
        content, events, request_id = _streamed(http, _ask("Tell me about routers", max_tokens=80))
    assert "simulated" not in whole.json()["choices"][0]["message"]["content"].lower()
    assert content.startswith("[[REDACTED:blocklist] ") and "simulated" not in content.lower()
    usage = next(e for e in events if e.get("object") == "usage")
    logged = poll(lambda: _logged(live, request_id), timeout=20)
    assert logged["guardrails"] == [{"check": "blocklist", "where": "output", "action": "redact", "count": 1,
                                     "kinds": {"blocklist": 1}}]
    assert logged["cost_breakdown"]["guardrail_micros"] == 7 and usage["cost_micros"] == logged["cost_micros"]


def test_a_streamed_output_block_ends_the_stream_with_the_error_event(live: LiveGateway) -> None:
    plain = _key(live, {})
    body = _ask("Write a long story about gateways [sim:tokens=80]", max_tokens=200)
    with _client(live, plain) as http:
        answer, _, _ = _streamed(http, body)
    word = answer.split()[20].strip(".")  # a word well into the answer: the stream has started before it
    key = _key(live, {"output": [{"check": "blocklist", "action": "block", "price_micros": 5}], "blocklist": [word]})
    with _client(live, key) as http:
        content, events, request_id = poll(
            lambda: (s := _streamed(http, body))[1][-1].get("error") and s, timeout=20)
    error = events[-1]["error"]
    assert error["code"] == "guardrail_blocked" and "'blocklist'" in error["message"]
    assert word.lower() not in content.lower().split()
    assert content and answer.startswith(content)  # what went out before the block is the answer's start
    logged = poll(lambda: _logged(live, request_id), timeout=20)
    assert logged["guardrails"][0]["action"] == "block" and logged["guardrails"][0]["count"] >= 1
