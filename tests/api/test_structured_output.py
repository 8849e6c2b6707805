"""Structured output: JSON taken out of fences and commentary, never rewritten; schema validation."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name", "age"]}


def test_json_in_code_fences_is_taken_out_and_reported(http: httpx.Client) -> None:
    # The simulated Gemini Flash wraps its JSON in a ```json fence with a line of commentary.
    response = http.post("/chat/completions", json={
        "model": "google-gemini-2.5-flash", "response_format": {"type": "json_object"}, "extended_thinking": False,
        "messages": [{"role": "user", "content": "Give me a JSON object describing a cat."}]})
    assert response.status_code == 200, response.text
    body = response.json()
    content = body["choices"][0]["message"]["content"]
    assert isinstance(json.loads(content), dict)
    assert body["usage"]["structured_output_repair"] == {"applied": True, "method": "code_fence"}


# Claude's support is not verified here, but a named model is always used: the Anthropic adapter turns
# response_format into an instruction, and the answer is checked against the schema all the same.
@pytest.mark.parametrize("model", ["openai-gpt-4.1-mini", "anthropic-claude-haiku-4.5"])
def test_json_schema_answer_is_validated(http: httpx.Client, model: str) -> None:
    response = http.post("/chat/completions", json={
        "model": model,
        "response_format": {"type": "json_schema", "json_schema": {"name": "person", "schema": SCHEMA}},
        "messages": [{"role": "user", "content": "Extract the person: Ada, 36."}]})
    assert response.status_code == 200, response.text
    body = response.json()
    document = json.loads(body["choices"][0]["message"]["content"])
    assert set(document) >= {"name", "age"}
    assert body["usage"]["structured_output_repair"]["schema_valid"] is True


def test_answer_without_a_document_is_left_as_it_is(http: httpx.Client) -> None:
    response = http.post("/chat/completions", json={
        "model": "openai-gpt-4.1-mini", "response_format": {"type": "json_object"},
        "messages": [{"role": "user", "content": "Describe a cat in JSON. [sim:json=none]"}]})
    body = response.json()
    assert body["choices"][0]["message"]["content"].startswith("[simulated openai-gpt-4.1-mini]")
    assert body["usage"]["structured_output_repair"] == {"applied": False, "reason": "no_document"}


def test_auto_with_response_format_serves_only_verified_models(http: httpx.Client) -> None:
    response = http.post("/chat/completions", json={
        "model": "auto", "response_format": {"type": "json_object"},
        "messages": [{"role": "user", "content": "List three fruits as a JSON array."}]})
    body = response.json()
    assert body["model"] in _verified()
    for alternative in body["routing"]["alternatives"]:
        assert alternative["model"] in _verified()


def _verified() -> set[str]:
    """The catalog's models with verified structured-output support (from the shipped data file)."""
    catalog = json.loads((Path(__file__).resolve().parents[2] / "routing" / "data" / "catalog.json").read_text())
    return {m["id"] for m in catalog["models"] if m["capabilities"]["structured_output"]}


def test_policy_can_ask_once_more_when_there_is_no_document(live) -> None:  # type: ignore[no-untyped-def]
    from tests.live import poll

    key = live.create_key(org="reask-org", policy="reask-once", structured_output_reask=True)
    headers = {"Authorization": f"Bearer {key}"}
    body = {"model": "openai-gpt-4.1-mini", "response_format": {"type": "json_object"},
            "messages": [{"role": "user", "content": "Describe a cat in JSON. [sim:json=none]"}]}

    def reasked() -> dict | None:
        data = httpx.post(f"{live.api}/chat/completions", json=body, headers=headers, timeout=30).json()
        return data if data["usage"].get("structured_output_repair", {}).get("reasked") else None

    data = poll(reasked)
    assert isinstance(json.loads(data["choices"][0]["message"]["content"]), dict)
    decision = poll(lambda: (r := httpx.get(f"{live.api}/routing-decisions/{data['id']}", headers=headers)).status_code == 200 and r.json())
    assert [a["outcome"] for a in decision["attempts"]] == ["no_json_document", "served"]
    # Both answers are billed: the usage covers the two calls.
    single = httpx.post(f"{live.api}/chat/completions", headers=headers, timeout=30, json={
        "model": "openai-gpt-4.1-mini", "messages": [{"role": "user", "content": "Describe a cat in JSON. [sim:json=none]"}]}).json()
    assert data["usage"]["prompt_tokens"] > single["usage"]["prompt_tokens"]


def test_streamed_structured_output_is_forwarded_as_written(http: httpx.Client) -> None:
    # The simulated upstream answers the same request with the same text, streamed or not.
    body = {"model": "openai-gpt-4.1-mini", "response_format": {"type": "json_object"},
            "messages": [{"role": "user", "content": "Give me a JSON object describing a cat. [sim:tag=as-written]"}]}
    whole = http.post("/chat/completions", json=body).json()
    text = ""
    usage_event = None
    with http.stream("POST", "/chat/completions", json={**body, "stream": True}) as response:
        for line in response.iter_lines():
            if line.startswith("data: {"):
                event = json.loads(line[6:])
                if event["object"] == "chat.completion.chunk":
                    for choice in event["choices"]:
                        text += choice["delta"].get("content") or ""
                elif event["object"] == "usage":
                    usage_event = event
    assert isinstance(json.loads(text), dict)
    assert text == whole["choices"][0]["message"]["content"]  # the upstream's text, not a re-serialised copy
    assert "structured_output_repair" not in whole["usage"]  # a plain document: nothing was taken out
    assert usage_event is not None and "structured_output_repair" not in usage_event  # a stream is never repaired


def test_named_model_without_a_needed_capability_is_a_400(http: httpx.Client) -> None:
    response = http.post("/chat/completions", json={
        "model": "deepseek-r1", "tools": [{"type": "function", "function": {"name": "lookup"}}],
        "messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "model_lacks_capability" and error["param"] == "model"
    assert "tools" in error["message"]


def test_policy_can_turn_extraction_off(live) -> None:  # type: ignore[no-untyped-def]
    from tests.live import poll

    key = live.create_key(org="no-extraction-org", policy="as-written", structured_output_extraction=False)
    body = {"model": "google-gemini-2.5-flash", "response_format": {"type": "json_object"}, "extended_thinking": False,
            "messages": [{"role": "user", "content": "Give me a JSON object describing a cat."}]}

    def as_written() -> dict | None:
        data = httpx.post(f"{live.api}/chat/completions", json=body, headers={"Authorization": f"Bearer {key}"},
                          timeout=30).json()
        return data if "structured_output_repair" not in data["usage"] else None

    data = poll(as_written)
    assert "```json" in data["choices"][0]["message"]["content"]  # the fenced answer, untouched
