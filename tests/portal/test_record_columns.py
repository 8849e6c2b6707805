"""The log row carries what Logs filters and shows without a join: task, complexity, thinking, cached tokens,
structured-output repair and what the request asked of routing (live gateway, real log writer)."""

from __future__ import annotations

import json

import httpx

from tests.live import LiveGateway, poll


def _log_row(live: LiveGateway, request_id: str) -> dict | None:
    out = live.shell(
        "import json; from observability.models import RequestLog as L; "
        f"row = L.objects.filter(request_id={request_id!r}).values('task', 'complexity', 'thinking', "
        "'cached_tokens', 'structured_output_repair', 'requested', 'reasoning_tokens', 'status_code', "
        "'final_disposition', 'client_disconnected').first(); "
        "print(json.dumps(row))")
    return json.loads(out) if out and out != "null" else None


def test_a_routed_request_logs_its_classification_thinking_and_what_it_asked(live: LiveGateway, http: httpx.Client) -> None:
    response = http.post("/chat/completions", json={
        "model": "auto", "max_tokens": 300, "extended_thinking": False,
        "routing": {"optimize": "cost", "quality_floor": "none", "allowed_providers": ["simulated"]},
        "messages": [{"role": "user", "content": "Write a python function that reverses a linked list"}]})
    assert response.status_code == 200, response.text
    routing = response.json()["routing"]
    row = poll(lambda: _log_row(live, response.json()["id"]), timeout=20)
    assert (row["task"], row["complexity"], row["thinking"]) == (routing["task"], routing["complexity"], routing["thinking"])
    assert row["task"] and row["thinking"] in ("on", "off")
    assert row["cached_tokens"] == response.json()["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert row["requested"] == {"routing": {"optimize": "cost", "quality_floor": "none",
                                            "allowed_providers": ["simulated"]},
                                "extended_thinking": False, "max_tokens": 300}


def test_a_structured_output_repair_is_logged(live: LiveGateway, http: httpx.Client) -> None:
    response = http.post("/chat/completions", json={
        "model": "google-gemini-2.5-flash", "response_format": {"type": "json_object"}, "extended_thinking": False,
        "messages": [{"role": "user", "content": "Give me a JSON object describing a cat."}]})
    assert response.status_code == 200, response.text
    row = poll(lambda: _log_row(live, response.json()["id"]), timeout=20)
    assert row["structured_output_repair"] == {"applied": True, "method": "code_fence"}
    assert row["requested"] == {"extended_thinking": False}


def test_a_stream_read_to_its_end_is_logged_as_served(live: LiveGateway, http: httpx.Client) -> None:
    # The server reports a disconnect once the body has ended; that is not the client leaving early.
    with http.stream("POST", "/chat/completions", json={
            "model": "auto", "stream": True, "messages": [{"role": "user", "content": "Write a haiku about routers"}]}) as response:
        text = "".join(response.iter_text())
        request_id = response.headers["x-request-id"]
    assert text.rstrip().endswith("data: [DONE]")
    row = poll(lambda: _log_row(live, request_id), timeout=20)
    assert (row["status_code"], row["final_disposition"], row["client_disconnected"]) == (200, "served", False)
