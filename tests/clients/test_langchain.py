"""`langchain-openai`'s ChatOpenAI pointed at the gateway (base_url and api_key), as LangChain documents it."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest
from compat import (
    API_KEY,
    BAD_KEY,
    BASE_URL,
    CHAIN_FAILED_STATUS,
    CITY_PROMPT,
    FAILING_PROMPT,
    MODEL,
    PROMPT,
    REQUEST_ID,
    SIMULATED,
    UNKNOWN_MODEL,
    WEATHER_PROMPT,
    WEATHER_RESULT,
    WEATHER_TOOL,
    City,
)
from langchain_core.messages import AIMessageChunk, HumanMessage, ToolMessage
from langchain_openai import ChatOpenAI


def chat(model: str = MODEL, **kwargs: object) -> ChatOpenAI:
    return ChatOpenAI(model=model, base_url=BASE_URL, api_key=kwargs.pop("api_key", API_KEY), max_retries=0,
                      timeout=30, **kwargs)


def request_id(message: object) -> str:
    """Return the response id LangChain keeps (its message ids are its own run ids)."""
    return message.response_metadata.get("id", "")  # type: ignore[attr-defined]


def usage_counts(message: object) -> tuple[int, int, int]:
    usage = message.usage_metadata  # type: ignore[attr-defined]
    return usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]


def aggregate(chunks: Iterator[AIMessageChunk] | list[AIMessageChunk]) -> AIMessageChunk:
    """Add the chunks up as LangChain documents (`full = full + chunk`)."""
    full = None
    for chunk in chunks:
        full = chunk if full is None else full + chunk
    assert full is not None
    return full


def test_invoke_has_text_usage_and_request_id() -> None:
    message = chat("auto").invoke(PROMPT)
    assert message.content.startswith(SIMULATED)
    assert REQUEST_ID.match(request_id(message))
    inputs, outputs, total = usage_counts(message)
    assert inputs > 0 and outputs > 0 and total == inputs + outputs


def test_documented_stream_loop(capsys: pytest.CaptureFixture[str]) -> None:
    llm = chat()
    whole = llm.invoke(PROMPT)
    capsys.readouterr()
    chunks = []
    for chunk in llm.stream(PROMPT):  # LangChain's loop
        chunks.append(chunk)
        print(chunk.content, end="", flush=True)
    assert capsys.readouterr().out == whole.content
    full = aggregate(chunks)
    assert full.content == whole.content
    # LangChain keeps no response id from a stream (response_metadata has none, with any server).
    assert full.usage_metadata is None  # stream_usage was not asked for


def test_stream_usage_counts_usage_once() -> None:
    whole = chat().invoke(PROMPT)
    full = aggregate(chat(stream_usage=True).stream(PROMPT))
    assert full.content == whole.content
    assert usage_counts(full) == usage_counts(whole)


@pytest.mark.parametrize("tool_choice", ["required", "get_weather"])
def test_tool_round_trip(tool_choice: str) -> None:
    llm = chat("auto").bind_tools([WEATHER_TOOL], tool_choice=tool_choice)
    question = HumanMessage(WEATHER_PROMPT)
    call_message = llm.invoke([question])
    assert [call["name"] for call in call_message.tool_calls] == ["get_weather"]
    call = call_message.tool_calls[0]
    assert isinstance(call["args"]["city"], str)
    answer = chat("auto").bind_tools([WEATHER_TOOL]).invoke(
        [question, call_message, ToolMessage(WEATHER_RESULT, tool_call_id=call["id"])])
    assert answer.content.startswith(SIMULATED)
    assert answer.tool_calls == []


# json_mode sends json_object and leaves the shape to the prompt, so the prompt gives an example.
JSON_MODE_PROMPT = f'{CITY_PROMPT} Answer in JSON like {{"name": "Paris", "country": "France", "population": 2100000}}.'


@pytest.mark.parametrize(("method", "prompt"), [("json_schema", CITY_PROMPT), ("function_calling", CITY_PROMPT),
                                                ("json_mode", JSON_MODE_PROMPT)])
def test_with_structured_output(method: str, prompt: str) -> None:
    structured = chat("auto").with_structured_output(City, method=method, include_raw=True)
    result = structured.invoke(prompt)
    assert result["parsing_error"] is None
    city = result["parsed"]
    assert isinstance(city, City) and city.name and city.country
    assert REQUEST_ID.match(request_id(result["raw"]))


async def test_async_invoke_and_stream() -> None:
    llm = chat()
    whole = await llm.ainvoke(PROMPT)
    assert REQUEST_ID.match(request_id(whole))
    chunks = [chunk async for chunk in llm.astream(PROMPT)]
    assert aggregate(chunks).content == whole.content


def test_bad_key_is_authentication_error() -> None:
    with pytest.raises(openai.AuthenticationError) as caught:
        chat("auto", api_key=BAD_KEY).invoke(PROMPT)
    assert caught.value.status_code == 401


def test_unknown_model_is_not_found() -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        chat(UNKNOWN_MODEL).invoke(PROMPT)
    assert caught.value.status_code == 404


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chain_failing_before_first_token_is_a_server_error(stream: bool) -> None:
    llm = chat("auto")
    with pytest.raises(openai.InternalServerError) as caught:
        if stream:
            for chunk in llm.stream(FAILING_PROMPT):
                print(chunk.content, end="")
        else:
            llm.invoke(FAILING_PROMPT)
    assert caught.value.status_code == CHAIN_FAILED_STATUS
    assert REQUEST_ID.match(caught.value.request_id or "")

