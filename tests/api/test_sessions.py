"""A conversation stays on the model that began it: the model that served its first turn, a fallback
included. A later turn that names another model, or moves because its model was not eligible, does
not re-anchor it. Driven over HTTP against the live gateway."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.live import fail_the_first_pick

QUESTION = "What is machine learning?"


def _ask(http: httpx.Client, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    response = http.post("/chat/completions", json={"model": "auto", "messages": messages, **extra})
    assert response.status_code == 200, response.text
    return response.json()


def _turn(messages: list[dict[str, Any]], answer: dict[str, Any], text: str) -> list[dict[str, Any]]:
    """The conversation so far, the answer, and the next user turn."""
    return [*messages, {"role": "assistant", "content": answer["choices"][0]["message"]["content"]},
            {"role": "user", "content": text}]


def _opening(text: str = QUESTION) -> list[dict[str, Any]]:
    # Each test begins its own conversation: a conversation is known by its opening.
    return [{"role": "system", "content": f"conversation {uuid.uuid4().hex}"}, {"role": "user", "content": text}]


def test_a_conversation_that_a_fallback_began_stays_on_the_fallback(http: httpx.Client) -> None:
    openings: dict[str, list[dict[str, Any]]] = {}

    def send(directive: str) -> dict[str, Any]:
        openings[directive] = _opening(f"{QUESTION} {directive}")
        return _ask(http, openings[directive])

    failing, first, _ = fail_the_first_pick(http, send)
    first_messages = openings[f"[sim:fail=503@{','.join(failing)}]"]
    fallback = first["model"]
    assert fallback not in failing
    second = _ask(http, _turn(first_messages, first, "Tell me more."))
    assert second["model"] == fallback
    assert second["routing"]["session"] == {"sticky": True, "model": fallback,
                                            "reason": "stayed on the model that began the conversation"}


def test_a_turn_that_names_another_model_does_not_re_anchor_the_conversation(http: httpx.Client) -> None:
    messages = _opening()
    first = _ask(http, messages)
    began = first["model"]
    other = "meta-llama-3.1-8b" if began != "meta-llama-3.1-8b" else "meta-llama-3.3-70b"
    messages = _turn(messages, first, "Say it more simply.")
    second = http.post("/chat/completions", json={"model": other, "messages": messages}).json()
    assert second["model"] == other
    assert second["routing"]["session"]["reason"] == "the request named the model"
    third = _ask(http, _turn(messages, second, "And once more, in one line."))
    assert third["model"] == began
    assert third["routing"]["session"]["sticky"] is True
    assert third["routing"]["session"]["model"] == began


def test_a_turn_that_moved_does_not_re_anchor_the_conversation(http: httpx.Client) -> None:
    messages = _opening()
    first = _ask(http, messages)
    began = first["model"]
    messages = _turn(messages, first, "Say it more simply.")
    # This turn's pool leaves out the model that began the conversation, so it moves.
    models = [m["id"] for m in http.get("/models").json()["data"] if m["id"] not in ("auto", began)]
    second = _ask(http, messages, routing={"model_pool": models})
    assert second["model"] != began
    assert second["routing"]["session"]["sticky"] is False
    assert second["routing"]["session"]["step"] == "pool_loaded"
    third = _ask(http, _turn(messages, second, "And once more, in one line."))
    assert third["model"] == began
    assert third["routing"]["session"] == {"sticky": True, "model": began,
                                           "reason": "stayed on the model that began the conversation"}
