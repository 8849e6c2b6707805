"""Every field of OpenAI's chat-completions request, on each adapter (OpenAI-compatible, Anthropic), streamed
and not, is forwarded to the upstream, mapped to its equivalent, or reported in `usage.dropped_params`: never
dropped in silence. What the upstream received is read from the simulated upstream's request log."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from inferbase.api.validation import FIELDS
from tests.live import LiveGateway, poll

# OpenAI's chat-completions request body, field by field (the API reference, create chat completion).
OPENAI_FIELDS = (
    "messages", "model", "audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
    "max_completion_tokens", "max_tokens", "metadata", "modalities", "n", "parallel_tool_calls", "prediction",
    "presence_penalty", "prompt_cache_key", "prompt_cache_retention", "reasoning_effort", "response_format",
    "safety_identifier", "seed", "service_tier", "stop", "store", "stream", "stream_options", "temperature",
    "tool_choice", "tools", "top_logprobs", "top_p", "user", "verbosity", "web_search_options",
)
MODELS = {
    "openai": "meta-llama-3.3-70b",  # a model that does not reason, served by the simulated OpenAI wire
    "anthropic": "anthropic-claude-haiku-4.5",  # served by the simulated Anthropic wire, thinking off unless asked
}
WEATHER = {"name": "get_weather", "description": "Weather in a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
CLOCK = {"name": "get_time", "parameters": {"type": "object", "properties": {}}}
TOOLS = [{"type": "function", "function": WEATHER}, {"type": "function", "function": CLOCK}]
CUSTOM_TOOL = {"type": "custom", "custom": {"name": "run_sql", "description": "Run one SQL query."}}
ANTHROPIC_TOOLS = [{"name": "get_weather", "description": "Weather in a city.", "input_schema": WEATHER["parameters"]},
                   {"name": "get_time", "input_schema": CLOCK["parameters"]}]
ABSENT = object()


@dataclass(frozen=True)
class Outcome:
    """What one adapter does with the field: the upstream body holds `items` (dotted paths; a callable is a
    predicate) and none of `absent`; `dropped_params` is exactly `dropped`; `calls` upstream requests."""

    items: dict[str, Any] = field(default_factory=dict)
    absent: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    calls: int = 1


def sent(**items: Any) -> Outcome:
    """Forwarded as written, or mapped to these items."""
    return Outcome(items=items)


def dropped(*names: str, absent: tuple[str, ...] = ()) -> Outcome:
    """Not sent, and reported in dropped_params."""
    return Outcome(absent=absent or names, dropped=names)


@dataclass(frozen=True)
class Row:
    field: str
    value: Any
    openai: Outcome
    anthropic: Outcome
    extra: dict[str, Any] = field(default_factory=dict)  # what the field needs beside it (tools for tool_choice)
    models: dict[str, str] = field(default_factory=dict)  # a model other than MODELS for this row
    id: str = ""


def contains(text: str) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, str) and text in value


ROWS = [
    Row("messages", [{"role": "system", "content": "Be brief."}],
        sent(**{"messages.0": {"role": "system", "content": "Be brief."}}),
        sent(system="Be brief.", **{"messages.0.role": "user"})),
    Row("model", None, sent(model=MODELS["openai"]), sent(model=MODELS["anthropic"])),
    Row("audio", {"voice": "alloy", "format": "wav"}, dropped("audio"), dropped("audio")),
    Row("frequency_penalty", 0.5, sent(frequency_penalty=0.5), dropped("frequency_penalty")),
    Row("function_call", {"name": "get_weather"},
        Outcome({"tool_choice": {"type": "function", "function": {"name": "get_weather"}}}, ("function_call",)),
        Outcome({"tool_choice": {"type": "tool", "name": "get_weather"}}, ("function_call",)),
        extra={"functions": [WEATHER]}),
    Row("function_call", "none", Outcome({"tool_choice": "none"}, ("function_call",)),
        Outcome({"tool_choice": {"type": "none"}}, ("function_call",)), extra={"functions": [WEATHER]},
        id="function_call-none"),
    Row("function_call", {"name": "get_time"}, dropped("function_call"), dropped("function_call"),
        extra={"tools": TOOLS, "tool_choice": "auto"}, id="function_call-beside-tool_choice"),
    Row("functions", [WEATHER], Outcome({"tools": [{"type": "function", "function": WEATHER}]}, ("functions",)),
        Outcome({"tools": ANTHROPIC_TOOLS[:1]}, ("functions",))),
    Row("functions", [CLOCK], Outcome({"tools": TOOLS[:1]}, ("functions",), ("functions",)),
        Outcome({"tools": ANTHROPIC_TOOLS[:1]}, ("functions",), ("functions",)),
        extra={"tools": TOOLS[:1]}, id="functions-beside-tools"),
    Row("logit_bias", {"50256": -100}, sent(logit_bias={"50256": -100}), dropped("logit_bias")),
    Row("logprobs", True, sent(logprobs=True), dropped("logprobs")),
    Row("max_completion_tokens", 77, Outcome({"max_tokens": 77}, ("max_completion_tokens",)),
        Outcome({"max_tokens": 77}, ("max_completion_tokens",))),
    Row("max_tokens", 66, sent(max_tokens=66), sent(max_tokens=66)),
    Row("metadata", {"purpose": "test"}, dropped("metadata"), dropped("metadata")),
    Row("modalities", ["text"], dropped("modalities"), dropped("modalities")),
    Row("n", 2, sent(n=2), Outcome(absent=("n",), calls=2)),
    Row("parallel_tool_calls", False, sent(parallel_tool_calls=False),
        Outcome({"tool_choice": {"type": "auto", "disable_parallel_tool_use": True}}, ("parallel_tool_calls",)),
        extra={"tools": TOOLS}),
    Row("prediction", {"type": "content", "content": "Hello"}, dropped("prediction"), dropped("prediction")),
    Row("presence_penalty", 0.3, sent(presence_penalty=0.3), dropped("presence_penalty")),
    Row("prompt_cache_key", "conversation-1", dropped("prompt_cache_key"), dropped("prompt_cache_key")),
    Row("prompt_cache_retention", "24h", dropped("prompt_cache_retention"), dropped("prompt_cache_retention")),
    # A model that reasons takes reasoning_effort; Claude takes it only as a thinking budget (thinking is off).
    Row("reasoning_effort", "low", sent(reasoning_effort="low"), dropped("reasoning_effort"),
        models={"openai": "openai-gpt-oss-120b"}),
    # A model that never reasons is not sent it (OpenAI and Groq refuse the request); Claude thinking takes it.
    Row("reasoning_effort", "low", dropped("reasoning_effort"),
        Outcome({"thinking.budget_tokens": 1024}, ("reasoning_effort",)),
        extra={"extended_thinking": True, "max_tokens": 4000}, id="reasoning_effort-thinking"),
    # Thinking switched off where the switch is reasoning_effort "none": the client's effort gives way.
    Row("reasoning_effort", "high", Outcome({"reasoning_effort": "none"}, (), ("reasoning_effort",)),
        dropped("reasoning_effort"), extra={"extended_thinking": False}, models={"openai": "qwen3-32b"},
        id="reasoning_effort-thinking-off"),
    Row("response_format", {"type": "json_object"}, sent(response_format={"type": "json_object"}),
        Outcome({"system": contains("JSON")}, ("response_format",)), extra={"prompt": "Answer in JSON."}),
    Row("safety_identifier", "user-hash-1", dropped("safety_identifier"), dropped("safety_identifier")),
    Row("seed", 7, sent(seed=7), dropped("seed")),
    Row("service_tier", "auto", dropped("service_tier"), dropped("service_tier")),
    Row("stop", ["END"], sent(stop=["END"]), Outcome({"stop_sequences": ["END"]}, ("stop",))),
    Row("store", False, dropped("store"), dropped("store")),
    Row("stream", None, sent(), sent()),  # the axis of every row: see _check_stream
    Row("stream_options", {"include_usage": True}, sent(), Outcome(absent=("stream_options",))),
    Row("stream_options", {"include_obfuscation": True}, dropped("stream_options.include_obfuscation", absent=()),
        dropped("stream_options.include_obfuscation", absent=("stream_options",)), id="stream_options-obfuscation"),
    Row("temperature", 0.7, sent(temperature=0.7), sent(temperature=0.7)),
    # Anthropic's temperature runs from 0 to 1: OpenAI's 1 to 2 is sent as its most random, 1.
    Row("temperature", 1.5, sent(temperature=1.5), sent(temperature=1), id="temperature-above-1"),
    # Claude thinks only at the default temperature.
    Row("temperature", 0.5, sent(temperature=0.5), Outcome({"thinking.type": "enabled"}, ("temperature",),
                                                           ("temperature",)),
        extra={"extended_thinking": True}, id="temperature-thinking"),
    Row("tool_choice", "required", sent(tool_choice="required"), sent(tool_choice={"type": "any"}),
        extra={"tools": TOOLS}),
    Row("tool_choice", {"type": "allowed_tools", "allowed_tools": {
        "mode": "required", "tools": [{"type": "function", "function": {"name": "get_time"}}]}},
        sent(tool_choice={"type": "allowed_tools", "allowed_tools": {
            "mode": "required", "tools": [{"type": "function", "function": {"name": "get_time"}}]}}),
        sent(tool_choice={"type": "any"}, tools=ANTHROPIC_TOOLS[1:]), extra={"tools": TOOLS}, id="tool_choice-allowed"),
    Row("tools", TOOLS, sent(tools=TOOLS), sent(tools=ANTHROPIC_TOOLS)),
    # A custom (free-form) tool has no Anthropic equivalent: the function tools go, and tools is reported.
    Row("tools", [TOOLS[0], CUSTOM_TOOL], sent(tools=[TOOLS[0], CUSTOM_TOOL]),
        Outcome({"tools": ANTHROPIC_TOOLS[:1]}, (), ("tools",)), id="tools-custom"),
    Row("top_logprobs", 2, sent(top_logprobs=2, logprobs=True), dropped("logprobs", "top_logprobs"),
        extra={"logprobs": True}),
    Row("top_p", 0.9, sent(top_p=0.9), sent(top_p=0.9)),
    # Claude (Sonnet 4.5, Haiku 4.5) refuses temperature and top_p together: temperature is kept.
    Row("top_p", 0.9, sent(top_p=0.9, temperature=0.7), Outcome({"temperature": 0.7}, ("top_p",), ("top_p",)),
        extra={"temperature": 0.7}, id="top_p-beside-temperature"),
    Row("user", "user-42", sent(user="user-42"), Outcome({"metadata.user_id": "user-42"}, ("user",))),
    Row("verbosity", "low", dropped("verbosity"), dropped("verbosity")),
    Row("web_search_options", {}, dropped("web_search_options"), dropped("web_search_options")),
]


def _get(body: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(body, list) and part.isdigit() and int(part) < len(body):
            body = body[int(part)]
        elif isinstance(body, dict) and part in body:
            body = body[part]
        else:
            return ABSENT
    return body


def _request(row: Row, adapter: str, stream: bool, tag: str) -> dict[str, Any]:
    extra = dict(row.extra)
    prompt = f"{extra.pop('prompt', 'What is machine learning?')} [sim:tag={tag}]"
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    body: dict[str, Any] = {"model": row.models.get(adapter, MODELS[adapter]), **extra, "stream": stream}
    if row.field == "messages":
        messages = [*row.value, *messages]
    elif row.value is not None:
        body[row.field] = row.value
    body["messages"] = messages
    return body


def _ask(http: httpx.Client, body: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Return the response's usage-like object that carries dropped_params, and the streamed events."""
    if not body["stream"]:
        response = http.post("/chat/completions", json=body)
        assert response.status_code == 200, response.text
        return response.json()["usage"], []
    events = []
    with http.stream("POST", "/chat/completions", json=body) as response:
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line.startswith("data: {"):
                events.append(json.loads(line[6:]))
    assert not [e for e in events if e.get("object") == "error"], events
    return next(e for e in events if e.get("object") == "usage"), events


def _received(simulated_url: str, tag: str) -> list[dict[str, Any]]:
    response = httpx.get(f"{simulated_url}/debug/requests", params={"tag": tag})
    return [r["body"] for r in response.json()["data"]]


def test_the_table_covers_every_field_of_openais_request() -> None:
    assert {row.field for row in ROWS} == set(OPENAI_FIELDS)
    assert set(OPENAI_FIELDS) <= {*FIELDS, "model", "messages"}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("adapter", ["openai", "anthropic"])
@pytest.mark.parametrize("row", ROWS, ids=[row.id or row.field for row in ROWS])
def test_every_field_is_forwarded_mapped_or_reported(http: httpx.Client, simulated_url: str, row: Row, adapter: str,
                                                     stream: bool) -> None:
    expected: Outcome = getattr(row, adapter)
    tag = f"fields-{uuid.uuid4().hex[:10]}"
    usage, events = _ask(http, _request(row, adapter, stream, tag))
    assert sorted(usage.get("dropped_params", [])) == sorted(expected.dropped)
    received = _received(simulated_url, tag)
    assert len(received) == expected.calls
    for upstream in received:
        for path, want in expected.items.items():
            got = _get(upstream, path)
            assert want(got) if callable(want) else got == want, (path, got)
        for path in expected.absent:
            assert _get(upstream, path) is ABSENT, (path, upstream)
        _check_stream(upstream, adapter, stream)
    if row.field == "stream_options" and stream and row.value.get("include_usage"):
        assert any(e.get("choices") == [] and e.get("usage", {}).get("total_tokens") for e in events)


def _check_stream(upstream: dict[str, Any], adapter: str, stream: bool) -> None:
    """A stream is streamed from the upstream; a whole answer may be too (for a model that may think, so that
    its progress is watched), and the OpenAI wire is then always asked for usage, which the request is billed on."""
    if stream:
        assert upstream.get("stream") is True
    if adapter == "openai":
        assert upstream.get("stream_options", ABSENT) == ({"include_usage": True} if upstream["stream"] else ABSENT)


# -- the thinking switch: non-standard fields only where the route declares them -------------------------------

SWITCH_FIELDS = ("reasoning_effort", "chat_template_kwargs", "reasoning")


@pytest.fixture(scope="module")
def switch_models(live: LiveGateway, simulated_url: str) -> Iterator[dict[str, str]]:
    """Models by the thinking switch their route declares: a catalog route, and two added with add_provider
    (one told --thinking-switch, one not), all served by the simulated upstream's switchable Qwen3."""
    live.manage("add_provider", "--name", "fields-vllm", "--base-url", f"{simulated_url}/openai/v1",
                "--model", "fields-qwen-vllm=qwen3-32b", "--reasoning", "switchable",
                "--thinking-switch", "chat_template_kwargs")
    live.manage("add_provider", "--name", "fields-plain", "--base-url", f"{simulated_url}/openai/v1",
                "--model", "fields-qwen-plain=qwen3-32b", "--reasoning", "switchable")
    try:
        poll(lambda: {"fields-qwen-vllm", "fields-qwen-plain"} <= {
            m["id"] for m in httpx.get(f"{live.api}/models").json()["data"]})
        # The catalog's simulated Qwen3 route declares the switch of the real route it stands for (DeepInfra's).
        yield {"reasoning_effort": "qwen3-32b", "chat_template_kwargs": "fields-qwen-vllm", "none": "fields-qwen-plain"}
    finally:
        live.remove_provider("fields-vllm")
        live.remove_provider("fields-plain")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize(("switch", "thinking", "fields", "shown"), [
    ("reasoning_effort", False, {"reasoning_effort": "none"}, ("off", None)),
    ("reasoning_effort", True, {}, ("on", None)),
    ("chat_template_kwargs", False, {"chat_template_kwargs": {"enable_thinking": False}}, ("off", None)),
    ("chat_template_kwargs", True, {"chat_template_kwargs": {"enable_thinking": True}}, ("on", None)),
    # Declared none: nothing is sent, the model thinks as it does by default, and the routing object says so.
    ("none", False, {}, ("on", "model_ignores_off")),
    ("none", True, {}, ("on", None)),
])
def test_the_thinking_switch_is_sent_only_where_the_route_declares_it(
        http: httpx.Client, simulated_url: str, switch_models: dict[str, str], switch: str, thinking: bool,
        fields: dict[str, Any], shown: tuple[str, str | None], stream: bool) -> None:
    tag = f"switch-{uuid.uuid4().hex[:10]}"
    body = {"model": switch_models[switch], "stream": stream, "extended_thinking": thinking, "max_tokens": 2000,
            "messages": [{"role": "user", "content": f"Prove that there are infinitely many primes. [sim:tag={tag}]"}]}
    if stream:
        with http.stream("POST", "/chat/completions", json=body) as response:
            assert response.status_code == 200, response.read()
            routing = json.loads(next(line for line in response.iter_lines() if line.startswith("data: {"))[6:])
    else:
        response = http.post("/chat/completions", json=body)
        assert response.status_code == 200, response.text
        routing = response.json()["routing"]
    (upstream,) = _received(simulated_url, tag)
    assert {k: upstream[k] for k in SWITCH_FIELDS if k in upstream} == fields
    assert (routing["thinking"], routing.get("thinking_reason")) == shown


@pytest.mark.parametrize("thinking", [False, True])
def test_the_anthropic_route_is_sent_no_openai_thinking_switch(http: httpx.Client, simulated_url: str,
                                                               thinking: bool) -> None:
    tag = f"switch-{uuid.uuid4().hex[:10]}"
    response = http.post("/chat/completions", json={
        "model": MODELS["anthropic"], "extended_thinking": thinking, "max_tokens": 2000,
        "messages": [{"role": "user", "content": f"Prove that there are infinitely many primes. [sim:tag={tag}]"}]})
    assert response.status_code == 200, response.text
    (upstream,) = _received(simulated_url, tag)
    assert not set(SWITCH_FIELDS) & set(upstream)
    assert ("thinking" in upstream) is thinking
