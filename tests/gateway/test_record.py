"""What the log record says a request asked of routing."""

from __future__ import annotations

from inferbase.api.validation import chat_request_parse
from inferbase.gateway.record import requested_of


def test_requested_keeps_the_routing_fields_given_in_their_order_and_nothing_else() -> None:
    chat = chat_request_parse({"model": "auto", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 64,
                               "routing": {"chain_length": 2, "optimize": "cost", "model_pool": ["a", "b"]}})
    asked = requested_of(chat)
    assert asked["routing"] == {"optimize": "cost", "model_pool": ("a", "b"), "chain_length": 2}
    assert list(asked["routing"]) == ["optimize", "model_pool", "chain_length"]  # the dataclass's order
    assert asked["max_tokens"] == 64


def test_a_request_without_routing_asks_nothing_of_it() -> None:
    chat = chat_request_parse({"model": "auto", "messages": [{"role": "user", "content": "hi"}]})
    assert "routing" not in requested_of(chat)
