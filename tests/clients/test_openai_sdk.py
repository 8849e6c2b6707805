"""The official `openai` Python SDK against the gateway, as its README uses it."""

from __future__ import annotations

import json
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
    token_counts,
)

MESSAGES = [{"role": "user", "content": PROMPT}]


@pytest.fixture
def client() -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=BASE_URL, api_key=API_KEY, max_retries=0, timeout=30) as client:
        yield client


@pytest.fixture
async def async_client():  # type: ignore[no-untyped-def]
    async with openai.AsyncOpenAI(base_url=BASE_URL, api_key=API_KEY, max_retries=0, timeout=30) as client:
        yield client


def test_whole_response_has_text_usage_and_request_id(client: openai.OpenAI) -> None:
    response = client.chat.completions.create(model="auto", messages=MESSAGES)
    assert response.choices[0].message.content.startswith(SIMULATED)
    assert REQUEST_ID.match(response.id)
    assert response._request_id == response.id  # the SDK reads X-Request-Id
    prompt, completion, total = token_counts(response.usage)
    assert prompt > 0 and completion > 0 and total == prompt + completion
    assert response.usage.model_extra["cost_micros"] >= 0


def test_documented_stream_loop_reads_every_chunk(client: openai.OpenAI, capsys: pytest.CaptureFixture[str]) -> None:
    whole = client.chat.completions.create(model=MODEL, messages=MESSAGES)
    capsys.readouterr()
    chunks = []
    stream = client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True)
    for chunk in stream:  # the README's loop, unguarded
        chunks.append(chunk)
        print(chunk.choices[0].delta.content or "", end="")
    assert capsys.readouterr().out == whole.choices[0].message.content
    assert REQUEST_ID.match(chunks[0].id)
    assert {chunk.id for chunk in chunks} == {chunks[0].id}
    assert all(chunk.usage is None for chunk in chunks)  # no usage was asked for


def test_stream_with_include_usage_counts_usage_once(client: openai.OpenAI) -> None:
    whole = client.chat.completions.create(model=MODEL, messages=MESSAGES)
    usages = []
    text = ""
    stream = client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True,
                                            stream_options={"include_usage": True})
    for chunk in stream:  # OpenAI's loop for include_usage: the usage chunk has no choices
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
        if chunk.usage:
            usages.append(chunk.usage)
    assert text == whole.choices[0].message.content
    assert len(usages) == 1
    assert token_counts(usages[0]) == token_counts(whole.usage)
    assert set(usages[0].model_dump(exclude_none=True)) == set(whole.usage.model_dump(exclude_none=True))


def test_stream_helper_builds_the_final_completion(client: openai.OpenAI) -> None:
    whole = client.chat.completions.create(model=MODEL, messages=MESSAGES)
    text = ""
    with client.chat.completions.stream(model=MODEL, messages=MESSAGES) as stream:
        for event in stream:
            if event.type == "content.delta":
                text += event.delta
        final = stream.get_final_completion()
    assert text == whole.choices[0].message.content
    assert final.choices[0].message.content == text
    assert REQUEST_ID.match(final.id)


def test_tool_round_trip(client: openai.OpenAI) -> None:
    messages: list[dict] = [{"role": "user", "content": WEATHER_PROMPT}]
    first = client.chat.completions.create(model="auto", messages=messages, tools=[WEATHER_TOOL],
                                           tool_choice="required")
    assert first.choices[0].finish_reason == "tool_calls"
    call = first.choices[0].message.tool_calls[0]
    assert call.function.name == "get_weather"
    assert isinstance(json.loads(call.function.arguments)["city"], str)
    messages += [first.choices[0].message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": call.id, "content": WEATHER_RESULT}]
    second = client.chat.completions.create(model="auto", messages=messages, tools=[WEATHER_TOOL])
    assert second.choices[0].message.content.startswith(SIMULATED)
    assert not second.choices[0].message.tool_calls


def test_named_tool_choice_streamed(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(
        model="auto", messages=[{"role": "user", "content": WEATHER_PROMPT}], tools=[WEATHER_TOOL], stream=True,
        tool_choice={"type": "function", "function": {"name": "get_weather"}})
    name, arguments = "", ""
    for chunk in stream:
        for call in chunk.choices[0].delta.tool_calls or []:
            name += call.function.name or ""
            arguments += call.function.arguments or ""
    assert name == "get_weather"
    assert isinstance(json.loads(arguments)["city"], str)


def test_structured_output_parse(client: openai.OpenAI) -> None:
    completion = client.chat.completions.parse(model="auto", messages=[{"role": "user", "content": CITY_PROMPT}],
                                               response_format=City)
    city = completion.choices[0].message.parsed
    assert isinstance(city, City) and city.name and city.country
    assert REQUEST_ID.match(completion.id)


def test_models_retrieve(client: openai.OpenAI) -> None:
    assert client.models.retrieve("auto").id == "auto"
    model = client.models.retrieve(MODEL)
    assert model.id == MODEL and model.object == "model" and model.owned_by
    assert isinstance(model.created, int) and model.created > 0  # OpenAI's shape: id, object, created, owned_by
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve(UNKNOWN_MODEL)


async def test_async_whole_and_stream(async_client: openai.AsyncOpenAI) -> None:
    whole = await async_client.chat.completions.create(model=MODEL, messages=MESSAGES)
    assert REQUEST_ID.match(whole.id)
    text, ids = "", set()
    stream = await async_client.chat.completions.create(model=MODEL, messages=MESSAGES, stream=True)
    async for chunk in stream:
        ids.add(chunk.id)
        text += chunk.choices[0].delta.content or ""
    assert text == whole.choices[0].message.content
    assert len(ids) == 1 and REQUEST_ID.match(ids.pop())


def test_bad_key_is_authentication_error() -> None:
    with openai.OpenAI(base_url=BASE_URL, api_key=BAD_KEY, max_retries=0) as client:
        with pytest.raises(openai.AuthenticationError) as caught:
            client.chat.completions.create(model="auto", messages=MESSAGES)
    assert caught.value.status_code == 401


def test_unknown_model_is_not_found(client: openai.OpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model=UNKNOWN_MODEL, messages=MESSAGES)
    assert caught.value.status_code == 404


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chain_failing_before_first_token_is_a_server_error(client: openai.OpenAI, stream: bool) -> None:
    with pytest.raises(openai.InternalServerError) as caught:
        response = client.chat.completions.create(
            model="auto", messages=[{"role": "user", "content": FAILING_PROMPT}], stream=stream)
        if stream:
            for chunk in response:
                print(chunk.choices[0].delta.content or "", end="")
    assert caught.value.status_code == CHAIN_FAILED_STATUS
    assert REQUEST_ID.match(caught.value.request_id or "")
