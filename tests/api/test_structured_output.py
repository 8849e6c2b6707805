"""Structured output: JSON taken out of fences and commentary, never rewritten; schema validation."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

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


def test_json_schema_answer_is_validated(http: httpx.Client) -> None:
    response = http.post("/chat/completions", json={
        "model": "openai-gpt-4.1-mini",
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
