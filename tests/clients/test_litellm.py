"""litellm as a client (the Python SDK, not its proxy): the gateway as an OpenAI-compatible endpoint, as
litellm documents it (`model="openai/<model>"`, `api_base`, `api_key`)."""

from __future__ import annotations

import json

import litellm
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

litellm.suppress_debug_info = True
litellm.telemetry = False

MESSAGES = [{"role": "user", "content": PROMPT}]


def completion(model: str = MODEL, messages: list[dict] = MESSAGES, **kwargs: object):  # type: ignore[no-untyped-def]
    kwargs.setdefault("api_key", API_KEY)
    return litellm.completion(model=f"openai/{model}", api_base=BASE_URL, messages=messages, max_retries=0,
                              timeout=30, **kwargs)


async def acompletion(model: str = MODEL, messages: list[dict] = MESSAGES, **kwargs: object):  # type: ignore[no-untyped-def]
    return await litellm.acompletion(model=f"openai/{model}", api_base=BASE_URL, api_key=API_KEY,
                                     messages=messages, max_retries=0, timeout=30, **kwargs)


def test_whole_response_has_text_usage_and_request_id() -> None:
    response = completion("auto")
    assert response.choices[0].message.content.startswith(SIMULATED)
    assert REQUEST_ID.match(response.id)
    prompt, completion_tokens, total = token_counts(response.usage)
    assert prompt > 0 and completion_tokens > 0 and total == prompt + completion_tokens


def test_documented_stream_loop(capsys: pytest.CaptureFixture[str]) -> None:
    whole = completion()
    capsys.readouterr()
    ids = []
    for part in completion(stream=True):  # litellm's loop
        ids.append(part.id)
        print(part.choices[0].delta.content or "", end="")
    assert capsys.readouterr().out == whole.choices[0].message.content
    assert REQUEST_ID.match(ids[0])
    assert set(ids) == {ids[0]}


def test_stream_with_include_usage_counts_usage_once() -> None:
    whole = completion()
    chunks = list(completion(stream=True, stream_options={"include_usage": True}))
    with_usage = [chunk for chunk in chunks if getattr(chunk, "usage", None)]
    assert len(with_usage) == 1
    assert token_counts(with_usage[0].usage) == token_counts(whole.usage)
    built = litellm.stream_chunk_builder(chunks, messages=MESSAGES)
    assert built.choices[0].message.content == whole.choices[0].message.content
    assert token_counts(built.usage) == token_counts(whole.usage)


def test_tool_round_trip() -> None:
    messages: list[dict] = [{"role": "user", "content": WEATHER_PROMPT}]
    first = completion("auto", messages, tools=[WEATHER_TOOL], tool_choice="required")
    call = first.choices[0].message.tool_calls[0]
    assert call.function.name == "get_weather"
    assert isinstance(json.loads(call.function.arguments)["city"], str)
    messages += [first.choices[0].message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": call.id, "content": WEATHER_RESULT}]
    second = completion("auto", messages, tools=[WEATHER_TOOL])
    assert second.choices[0].message.content.startswith(SIMULATED)
    assert not second.choices[0].message.tool_calls


def test_structured_output_json_schema() -> None:
    response = completion("auto", [{"role": "user", "content": CITY_PROMPT}], response_format=City)
    city = City.model_validate_json(response.choices[0].message.content)
    assert city.name and city.country
    assert REQUEST_ID.match(response.id)


async def test_async_whole_and_stream() -> None:
    whole = await acompletion()
    assert REQUEST_ID.match(whole.id)
    text, ids = "", set()
    async for part in await acompletion(stream=True):
        ids.add(part.id)
        text += part.choices[0].delta.content or ""
    assert text == whole.choices[0].message.content
    assert len(ids) == 1 and REQUEST_ID.match(ids.pop())


def test_bad_key_is_authentication_error() -> None:
    with pytest.raises(litellm.AuthenticationError) as caught:
        completion("auto", api_key=BAD_KEY)
    assert caught.value.status_code == 401


def test_unknown_model_is_not_found() -> None:
    with pytest.raises(litellm.NotFoundError) as caught:
        completion(UNKNOWN_MODEL)
    assert caught.value.status_code == 404


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chain_failing_before_first_token_is_a_bad_gateway(stream: bool) -> None:
    with pytest.raises(litellm.BadGatewayError) as caught:
        response = completion("auto", [{"role": "user", "content": FAILING_PROMPT}], stream=stream)
        if stream:
            for part in response:
                print(part.choices[0].delta.content or "", end="")
    assert caught.value.status_code == CHAIN_FAILED_STATUS
