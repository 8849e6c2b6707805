"""The Anthropic adapter's request translation (pure): messages, tools, thinking, what is not forwarded."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from providers.anthropic import (
    not_forwarded,
    to_anthropic_request,
)
from tests.providers.anthropic.conftest import TOOLS, make_options, user

# -- request translation ------------------------------------------------------------------------------


def test_request_system_and_developer_messages_become_system() -> None:
    body = {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "developer", "content": [{"type": "text", "text": "Use metric units."}]},
            *user("hi"),
        ],
    }
    out = to_anthropic_request(body, make_options())
    assert out["system"] == "Be brief.\n\nUse metric units."
    assert out["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert out["max_tokens"] == 4096
    assert "thinking" not in out


def test_request_images_become_base64_or_url_blocks() -> None:
    parts = [
        {"type": "text", "text": "compare"},
        {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
    ]
    out = to_anthropic_request(
        {"model": "m", "messages": [{"role": "user", "content": parts}]}, make_options()
    )
    blocks = out["messages"][0]["content"]
    assert blocks[1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/jpeg", "data": "AAAA"},
    }
    assert blocks[2] == {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.png"}}


def test_request_tool_calls_and_merged_tool_results() -> None:
    messages = [
        *user("weather in Paris and Rome?"),
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "I should call the tool twice.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Rome"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "rain"}]},
    ]
    out = to_anthropic_request({"model": "m", "messages": messages, "tools": TOOLS}, make_options())
    assert [m["role"] for m in out["messages"]] == ["user", "assistant", "user"]
    assistant = out["messages"][1]["content"]
    assert assistant == [
        {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "c2", "name": "get_weather", "input": {"city": "Rome"}},
    ]
    assert "I should call" not in orjson.dumps(out).decode()  # reasoning_content is not forwarded
    assert out["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "sunny"},
        {"type": "tool_result", "tool_use_id": "c2", "content": [{"type": "text", "text": "rain"}]},
    ]
    assert out["tools"] == [
        {
            "name": "get_weather",
            "description": "Weather for a city",
            "input_schema": TOOLS[0]["function"]["parameters"],
        }
    ]


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        ("auto", None, {"type": "auto"}),
        ("required", None, {"type": "any"}),
        ("none", None, {"type": "none"}),
        (
            {"type": "function", "function": {"name": "get_weather"}},
            None,
            {"type": "tool", "name": "get_weather"},
        ),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
    ],
)
def test_request_tool_choice_mapping(choice: Any, parallel: Any, expected: dict[str, Any]) -> None:
    body: dict[str, Any] = {"model": "m", "messages": user("hi"), "tools": TOOLS}
    if choice is not None:
        body["tool_choice"] = choice
    if parallel is not None:
        body["parallel_tool_calls"] = parallel
    assert to_anthropic_request(body, make_options())["tool_choice"] == expected


def test_request_sampling_stop_and_user_fields() -> None:
    body = {
        "model": "m",
        "messages": user("hi"),
        "max_completion_tokens": 300,
        "temperature": 0.2,
        "stop": "END",
        "user": "u-42",
    }
    out = to_anthropic_request(body, make_options(thinking=False))
    assert (out["max_tokens"], out["temperature"]) == (300, 0.2)
    assert out["stop_sequences"] == ["END"]
    assert out["metadata"] == {"user_id": "u-42"}
    assert "thinking" not in out
    assert to_anthropic_request({**body, "temperature": None, "top_p": 0.9}, make_options())["top_p"] == 0.9


@pytest.mark.parametrize(
    ("fields", "thinking", "sent", "skipped"),
    [
        # Claude takes temperature or top_p, not both: temperature is kept.
        ({"temperature": 0.2, "top_p": 0.9}, None, {"temperature": 0.2}, {"top_p"}),
        # Anthropic's temperature runs from 0 to 1: above is sent as 1.
        ({"temperature": 1.7}, None, {"temperature": 1}, set()),
        # While thinking, only the default temperature and a top_p from 0.95 are taken.
        ({"temperature": 0.5}, True, {}, {"temperature"}),
        ({"temperature": 1}, True, {}, set()),
        ({"top_p": 0.5}, True, {}, {"top_p"}),
        ({"top_p": 0.97}, True, {"top_p": 0.97}, set()),
        ({"seed": 1, "logprobs": False, "frequency_penalty": 0}, None, {},
         {"seed", "logprobs", "frequency_penalty"}),
        ({"reasoning_effort": "high"}, None, {}, {"reasoning_effort"}),
        ({"reasoning_effort": "high"}, True, {"thinking": {"type": "enabled", "budget_tokens": 3072}}, set()),
        # Anthropic refuses thinking with a forced tool call: the call goes without thinking.
        ({"reasoning_effort": "high", "tools": TOOLS, "tool_choice": "required"}, True, {"tool_choice": {"type": "any"}},
         {"reasoning_effort"}),
        ({"tools": [*TOOLS, {"type": "custom", "custom": {"name": "sql"}}]}, None,
         {"tools": [{"name": "get_weather", "description": "Weather for a city",
                     "input_schema": TOOLS[0]["function"]["parameters"]}]}, {"tools"}),
        ({"tools": TOOLS, "tool_choice": {"type": "custom", "custom": {"name": "sql"}}}, None, {}, {"tool_choice"}),
    ],
)
def test_request_carries_all_but_what_it_reports_not_forwarded(fields: dict[str, Any], thinking: bool | None,
                                                               sent: dict[str, Any], skipped: set[str]) -> None:
    body = {"model": "m", "messages": user("hi"), "max_tokens": 4096, **fields}
    out = to_anthropic_request(body, make_options(thinking=thinking))
    assert {k: out.get(k) for k in sent} == sent
    assert not_forwarded(body, thinking) == skipped
    for name in skipped - {"tools"}:
        assert name not in out


def test_request_allowed_tools_narrows_the_tools_and_says_whether_one_must_be_called() -> None:
    tools = [*TOOLS, {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}]
    for mode, kind in (("required", "any"), ("auto", "auto")):
        choice = {"type": "allowed_tools",
                  "allowed_tools": {"mode": mode, "tools": [{"type": "function", "function": {"name": "get_time"}}]}}
        out = to_anthropic_request({"model": "m", "messages": user("hi"), "tools": tools, "tool_choice": choice},
                                   make_options())
        assert [t["name"] for t in out["tools"]] == ["get_time"]
        assert out["tool_choice"] == {"type": kind}


def test_request_thinking_budget_defaults_and_drops_temperature() -> None:
    body = {"model": "m", "messages": user("hi"), "max_tokens": 8000, "temperature": 0.5}
    out = to_anthropic_request(body, make_options(thinking=True))
    assert out["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert out["max_tokens"] == 8000
    assert "temperature" not in out
    unset = to_anthropic_request({"model": "m", "messages": user("hi")}, make_options(thinking=True))
    assert unset["max_tokens"] == 4096 and unset["thinking"]["type"] == "enabled"  # Anthropic needs max_tokens
    assert "thinking" not in to_anthropic_request(
        {"model": "m", "messages": user("hi")}, make_options(thinking=None)
    )


@pytest.mark.parametrize("max_tokens", [1280, 1500, 2000, 3000, 40000])
def test_request_thinking_budget_fits_inside_the_callers_max_tokens(max_tokens: int) -> None:
    out = to_anthropic_request(
        {"model": "m", "messages": user("hi"), "max_tokens": max_tokens}, make_options(thinking=True)
    )
    assert out["max_tokens"] == max_tokens  # never raised: thinking counts toward it
    budget = out["thinking"]["budget_tokens"]
    assert 1024 <= budget <= max_tokens - 256  # Anthropic's minimum, and room left for the answer


@pytest.mark.parametrize("max_tokens", [500, 1024, 1279])
def test_request_without_room_for_the_minimum_budget_sends_no_thinking(max_tokens: int) -> None:
    body = {"model": "m", "messages": user("hi"), "max_tokens": max_tokens, "temperature": 0.5}
    out = to_anthropic_request(body, make_options(thinking=True))
    assert "thinking" not in out
    assert (out["max_tokens"], out["temperature"]) == (max_tokens, 0.5)


def test_request_reasoning_effort_sets_the_budget_inside_max_tokens() -> None:
    budgets = {}
    for effort in ("minimal", "low", "medium", "high", "xhigh"):
        body = {"model": "m", "messages": user("hi"), "max_tokens": 8000, "reasoning_effort": effort}
        out = to_anthropic_request(body, make_options(thinking=True))
        assert out["max_tokens"] == 8000
        budgets[effort] = out["thinking"]["budget_tokens"]
    assert budgets == {"minimal": 1024, "low": 2000, "medium": 4000, "high": 6000, "xhigh": 7744}
    body = {"model": "m", "messages": user("hi"), "max_tokens": 8000}
    assert not not_forwarded({**body, "reasoning_effort": "high"}, True)
    assert not_forwarded({**body, "reasoning_effort": "high"}, None) == {"reasoning_effort"}  # thinking off
    assert not_forwarded({**body, "reasoning_effort": "none"}, True) == {"reasoning_effort"}


def test_request_response_format_asks_for_json_in_the_system_prompt() -> None:
    schema = {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    out = to_anthropic_request({"model": "m", "messages": user("hi"), "response_format": fmt}, make_options())
    assert "only a JSON document" in out["system"]
    assert orjson.dumps(schema).decode() in out["system"]
