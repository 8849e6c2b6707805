"""The OpenAI-compatible request body: sent as written, with the thinking switch only in the dialect the route
declares (a strict server refuses a field it does not know)."""

from __future__ import annotations

from typing import Any

import pytest

from providers.base import CallOptions, UpstreamTarget
from providers.openai_compat import OpenAICompatibleAdapter, request_body

BODY = {"messages": [{"role": "user", "content": "hi"}], "temperature": 0.2}
SWITCH_FIELDS = ("reasoning_effort", "chat_template_kwargs", "reasoning")


def target(switch: str) -> UpstreamTarget:
    return UpstreamTarget(provider="p", dialect="openai", base_url="http://p/v1", upstream_model="up",
                          thinking_switch=switch)


def options(thinking: bool | None) -> CallOptions:
    return CallOptions(first_token_timeout=1, idle_timeout=1, deadline=0, thinking=thinking)


@pytest.mark.parametrize(
    ("switch", "thinking", "fields"),
    [
        ("reasoning_effort", False, {"reasoning_effort": "none"}),
        ("reasoning_effort", True, {}),
        ("chat_template_kwargs", False, {"chat_template_kwargs": {"enable_thinking": False}}),
        ("chat_template_kwargs", True, {"chat_template_kwargs": {"enable_thinking": True}}),
        ("reasoning_enabled", False, {"reasoning": {"enabled": False}}),
        ("reasoning_enabled", True, {"reasoning": {"enabled": True}}),
        ("none", False, {}),
        ("none", True, {}),
        ("chat_template_kwargs", None, {}),  # left to the model: no switch anywhere
    ],
)
def test_the_thinking_switch_is_sent_only_in_the_routes_dialect(switch: str, thinking: bool | None,
                                                               fields: dict[str, Any]) -> None:
    out = request_body(BODY, target(switch), options(thinking))
    assert out == {**BODY, "model": "up", **fields}
    assert set(SWITCH_FIELDS) & set(out) == set(fields)


def test_a_reasoning_effort_the_switch_overrides_is_reported() -> None:
    adapter = OpenAICompatibleAdapter()
    body = {**BODY, "reasoning_effort": "high"}
    assert adapter.not_forwarded(body, target("reasoning_effort"), False) == {"reasoning_effort"}
    assert not adapter.not_forwarded(body, target("reasoning_effort"), True)
    assert not adapter.not_forwarded(body, target("chat_template_kwargs"), False)  # sent beside the switch
    assert not adapter.not_forwarded({**BODY, "reasoning_effort": "none"}, target("reasoning_effort"), False)
