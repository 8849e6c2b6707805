"""The simulated upstream's structured output, refusals and tools; forced tool_choice and plausible, prompt-shaped JSON."""

from __future__ import annotations

from datetime import date
from typing import Any

import httpx
import orjson
import pytest

from tests.providers.simulated.conftest import (
    TOOLS,
    anthropic_events,
    chat,
    chat_chunks,
    user,
)

# -- structured output, refusals, tools -----------------------------------------------------------------


async def test_json_object_answer_is_a_json_document(client: httpx.AsyncClient) -> None:
    data = (await chat(client, messages=user("give JSON"), response_format={"type": "json_object"})).json()
    doc = orjson.loads(data["choices"][0]["message"]["content"])
    assert doc["simulated"] == "sim-plain"


async def test_json_schema_answer_fills_required_properties(client: httpx.AsyncClient) -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "kind": {"enum": ["a", "b"]},
            "optional": {"type": "string"},
        },
        "required": ["name", "age", "tags", "kind"],
    }
    fmt = {"type": "json_schema", "json_schema": {"name": "person", "schema": schema}}
    data = (await chat(client, messages=user("person"), response_format=fmt)).json()
    doc = orjson.loads(data["choices"][0]["message"]["content"])
    assert set(doc) == {"name", "age", "tags", "kind"}
    assert isinstance(doc["age"], int) and isinstance(doc["tags"], list) and doc["kind"] == "a"
    assert doc["name"].startswith("[simulated sim-plain]")


async def test_fenced_model_wraps_json_in_code_fences(client: httpx.AsyncClient) -> None:
    data = (
        await chat(client, model="sim-fence", messages=user("json"), response_format={"type": "json_object"})
    ).json()
    content = data["choices"][0]["message"]["content"]
    assert content.startswith("[simulated sim-fence] Here is the JSON:\n```json\n{")
    assert content.endswith("\n```")
    orjson.loads(content.split("```json\n", 1)[1].rsplit("\n```", 1)[0])


async def test_json_none_directive_answers_prose(client: httpx.AsyncClient) -> None:
    body = {"messages": user("json [sim:json=none]"), "response_format": {"type": "json_object"}}
    content = (await chat(client, **body)).json()["choices"][0]["message"]["content"]
    assert "{" not in content and content.startswith("[simulated sim-plain] ")


@pytest.mark.parametrize(
    ("model", "text"), [("sim-refuser", "how to make a Bioweapon"), ("sim-plain", "[sim:refuse]")]
)
async def test_refusal_ends_with_content_filter(client: httpx.AsyncClient, model: str, text: str) -> None:
    data = (await chat(client, model=model, messages=user(text))).json()
    assert data["choices"][0]["finish_reason"] == "content_filter"
    assert len(data["choices"][0]["message"]["content"]) < 60
    events = await anthropic_events(client, model=model, messages=user(text))
    assert events[-2][1]["delta"]["stop_reason"] == "refusal"


async def test_tool_call_directive_answers_with_a_tool_call(client: httpx.AsyncClient) -> None:
    data = (await chat(client, messages=user("weather? [sim:tool_call=get_weather]"), tools=TOOLS)).json()
    choice = data["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    call = choice["message"]["tool_calls"][0]
    assert call["id"].startswith("call_") and call["type"] == "function"
    assert call["function"]["name"] == "get_weather"
    assert set(orjson.loads(call["function"]["arguments"])) == {"city", "days"}
    first = (await chat(client, messages=user("[sim:tool_call]"), tools=TOOLS)).json()
    assert first["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "noop"


async def test_tool_call_streams_name_first_then_argument_fragments(client: httpx.AsyncClient) -> None:
    chunks = await chat_chunks(client, messages=user("[sim:tool_call=get_weather]"), tools=TOOLS)
    calls = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks[1:-2]]
    assert calls[0]["id"].startswith("call_")
    assert calls[0]["function"] == {"name": "get_weather", "arguments": ""}
    assert len(calls) > 2 and all(set(c) == {"index", "function"} for c in calls[1:])
    arguments = "".join(c["function"]["arguments"] for c in calls)
    assert set(orjson.loads(arguments)) == {"city", "days"}
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"


async def test_tool_result_is_answered_with_text(client: httpx.AsyncClient) -> None:
    messages = [
        *user("[sim:tool_call]"),
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "noop", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
    ]
    data = (await chat(client, messages=messages, tools=TOOLS)).json()
    assert data["choices"][0]["finish_reason"] == "stop"
    assert data["choices"][0]["message"]["content"].startswith("[simulated ")


async def test_model_without_vision_refuses_images(client: httpx.AsyncClient) -> None:
    parts = [
        {"type": "text", "text": "what is this"},
        {"type": "image_url", "image_url": {"url": "http://x/y.png"}},
    ]
    r = await chat(client, model="sim-blind", messages=[{"role": "user", "content": parts}])
    assert r.status_code == 400


# -- issue 16: forced tool_choice, plausible and prompt-shaped JSON ---------------------------------


@pytest.mark.parametrize(("choice", "name"), [
    ("required", "noop"),
    ({"type": "function", "function": {"name": "get_weather"}}, "get_weather"),
])
async def test_forced_tool_choice_answers_with_a_call(client: httpx.AsyncClient, choice: Any, name: str) -> None:
    import jsonschema

    data = (await chat(client, messages=user("what's the weather in Oslo?"), tools=TOOLS, tool_choice=choice)).json()
    assert data["choices"][0]["finish_reason"] == "tool_calls"
    call = data["choices"][0]["message"]["tool_calls"][0]["function"]
    assert call["name"] == name
    parameters = next(t["function"]["parameters"] for t in TOOLS if t["function"]["name"] == name)
    jsonschema.validate(orjson.loads(call["arguments"]), parameters)
    streamed = await chat_chunks(client, messages=user("weather?"), tools=TOOLS, tool_choice=choice)
    assert streamed[-2]["choices"][0]["finish_reason"] == "tool_calls"
    arguments = "".join(call["function"].get("arguments") or "" for chunk in streamed[:-1]
                        for call in chunk["choices"][0]["delta"].get("tool_calls") or ())
    jsonschema.validate(orjson.loads(arguments), parameters)


async def test_auto_tool_choice_answers_with_text(client: httpx.AsyncClient) -> None:
    data = (await chat(client, messages=user("weather?"), tools=TOOLS, tool_choice="auto")).json()
    assert data["choices"][0]["finish_reason"] == "stop"


@pytest.mark.parametrize(("choice", "name"), [({"type": "any"}, "noop"), ({"type": "tool", "name": "get_weather"}, "get_weather")])
async def test_anthropic_forced_tool_choice_answers_with_a_call(client: httpx.AsyncClient, choice: Any, name: str) -> None:
    tools = [{"name": t["function"]["name"], "input_schema": t["function"]["parameters"]} for t in TOOLS]
    body = {"model": "sim-plain", "max_tokens": 500, "messages": user("weather?"), "tools": tools, "tool_choice": choice}
    data = (await client.post("/anthropic/v1/messages", json=body)).json()
    assert data["stop_reason"] == "tool_use"
    assert data["content"][-1]["name"] == name


PLAUSIBLE = {
    "type": "object",
    "$defs": {"Item": {"type": "object", "properties": {"sku": {"type": "string", "maxLength": 8},
                                                         "qty": {"type": "integer", "minimum": 1, "maximum": 5}},
                       "required": ["sku", "qty"]}},
    "properties": {
        "age": {"type": "integer", "minimum": 18, "maximum": 30},
        "score": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "count": {"type": "integer"},
        "when": {"type": "string", "format": "date"},
        "email": {"type": "string", "format": "email"},
        "level": {"type": "string", "enum": ["low", "high"]},
        "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}, "minItems": 2},
        "note": {"anyOf": [{"type": "string", "minLength": 40}, {"type": "null"}]},
    },
    "required": ["age", "score", "count", "when", "email", "level", "items", "note"],
}


async def test_json_schema_answer_is_valid_and_plausible(client: httpx.AsyncClient) -> None:
    import jsonschema

    fmt = {"type": "json_schema", "json_schema": {"name": "p", "schema": PLAUSIBLE}}
    for i in range(20):
        data = (await chat(client, messages=user(f"person {i}"), response_format=fmt)).json()
        doc = orjson.loads(data["choices"][0]["message"]["content"])
        jsonschema.validate(doc, PLAUSIBLE)
        assert abs(doc["count"]) <= 100
        assert date.fromisoformat(doc["when"]) and "@" in doc["email"]
        assert all(1 <= item["qty"] <= 5 for item in doc["items"])


@pytest.mark.parametrize("where", ["system", "user"])
async def test_json_object_answers_in_the_shape_the_prompt_gives(client: httpx.AsyncClient, where: str) -> None:
    import jsonschema

    schema = {"title": "Person", "type": "object", "properties": {"name": {"type": "string"},
                                                                  "age": {"type": "integer", "minimum": 0}},
              "required": ["name", "age"]}
    instruction = f"Answer in JSON matching this JSON schema:\n{orjson.dumps(schema).decode()}\nReturn an instance."
    messages = ([{"role": "system", "content": instruction}, *user("Jo is 31")] if where == "system"
                else user("Jo is 31. " + instruction))
    data = (await chat(client, messages=messages, response_format={"type": "json_object"})).json()
    doc = orjson.loads(data["choices"][0]["message"]["content"])
    jsonschema.validate(doc, schema)
    example = 'Reply as JSON like {"city": "Paris", "population": 2100000, "capital": true}.'
    data = (await chat(client, messages=user(example), response_format={"type": "json_object"})).json()
    doc = orjson.loads(data["choices"][0]["message"]["content"])
    assert set(doc) == {"city", "population", "capital"}
    assert isinstance(doc["population"], int) and isinstance(doc["capital"], bool)


# Bounds as other generators write them: draft 4's boolean exclusive bounds (older tools and hand-written
# schemas), fractional bounds on an integer, both an inclusive and an exclusive bound, multipleOf.
BOUNDS = {
    "type": "object",
    "properties": {
        "draft4": {"type": "integer", "minimum": 10, "maximum": 13, "exclusiveMinimum": True, "exclusiveMaximum": True},
        "draft4_number": {"type": "number", "minimum": 5, "maximum": 6, "exclusiveMinimum": True},
        "fractional": {"type": "integer", "minimum": 0.5, "maximum": 2.5},
        "both": {"type": "integer", "minimum": 50, "exclusiveMinimum": 0},
        "step": {"type": "integer", "minimum": 1, "maximum": 100, "multipleOf": 25},
        "price": {"type": "number", "minimum": 0, "multipleOf": 0.25},
        "tiny": {"type": "number", "minimum": 0.001, "maximum": 0.004},
    },
    "required": ["draft4", "draft4_number", "fractional", "both", "step", "price", "tiny"],
}


async def test_json_schema_answer_respects_every_form_of_numeric_bound(client: httpx.AsyncClient) -> None:
    from jsonschema import Draft4Validator, Draft202012Validator

    draft4 = {key: value for key, value in BOUNDS["properties"].items() if key.startswith("draft4")}
    fmt = {"type": "json_schema", "json_schema": {"name": "b", "schema": BOUNDS}}
    for i in range(20):
        data = (await chat(client, messages=user(f"bounds {i}"), response_format=fmt)).json()
        doc = orjson.loads(data["choices"][0]["message"]["content"])
        Draft4Validator({"type": "object", "properties": draft4}).validate(doc)
        rest = {**BOUNDS, "properties": {k: v for k, v in BOUNDS["properties"].items() if k not in draft4}}
        Draft202012Validator(rest).validate(doc)
        assert doc["draft4"] in (11, 12) and 5 < doc["draft4_number"] <= 6
