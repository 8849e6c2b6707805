"""instructor over the `openai` SDK, in both of the modes it uses with OpenAI-compatible servers: TOOLS (a
forced tool call) and JSON (`json_object` with the schema in the prompt). Runs in .venv-instructor."""

from __future__ import annotations

import instructor
import openai
import pytest
from compat import (
    API_KEY,
    BAD_KEY,
    BASE_URL,
    CHAIN_FAILED_STATUS,
    CITY_PROMPT,
    FAILING_PROMPT,
    REQUEST_ID,
    UNKNOWN_MODEL,
    City,
)
from instructor.core.exceptions import InstructorRetryException


def api_error(caught: pytest.ExceptionInfo[InstructorRetryException]) -> BaseException | None:
    """Return the SDK's error that instructor wrapped: it reports every failed call as a retry exception."""
    return caught.value.__cause__


MODES = [instructor.Mode.TOOLS, instructor.Mode.JSON]
MESSAGES = [{"role": "user", "content": CITY_PROMPT}]


def client(mode: instructor.Mode, api_key: str = API_KEY) -> instructor.Instructor:
    return instructor.from_openai(openai.OpenAI(base_url=BASE_URL, api_key=api_key, max_retries=0, timeout=30),
                                  mode=mode)


@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.name)
def test_create_returns_the_model_with_completion(mode: instructor.Mode) -> None:
    city, completion = client(mode).chat.completions.create_with_completion(
        model="auto", response_model=City, messages=MESSAGES, max_retries=0)
    assert isinstance(city, City) and city.name and city.country
    assert REQUEST_ID.match(completion.id)
    assert completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens > 0


@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.name)
def test_create_partial_streams_to_the_whole_model(mode: instructor.Mode) -> None:
    partials = []
    for partial in client(mode).chat.completions.create_partial(  # instructor's streaming loop
            model="auto", response_model=City, messages=MESSAGES, max_retries=0):
        partials.append(partial)
    city = City.model_validate(partials[-1].model_dump())
    assert city.name and city.country


@pytest.mark.parametrize("mode", MODES, ids=lambda mode: mode.name)
async def test_async_create(mode: instructor.Mode) -> None:
    async_client = instructor.from_openai(
        openai.AsyncOpenAI(base_url=BASE_URL, api_key=API_KEY, max_retries=0, timeout=30), mode=mode)
    city = await async_client.chat.completions.create(model="auto", response_model=City, messages=MESSAGES,
                                                      max_retries=0)
    assert isinstance(city, City) and city.name


def test_bad_key_is_authentication_error() -> None:
    with pytest.raises(InstructorRetryException) as caught:
        client(instructor.Mode.TOOLS, BAD_KEY).chat.completions.create(
            model="auto", response_model=City, messages=MESSAGES, max_retries=0)
    assert isinstance(api_error(caught), openai.AuthenticationError)
    assert api_error(caught).status_code == 401


def test_unknown_model_is_not_found() -> None:
    with pytest.raises(InstructorRetryException) as caught:
        client(instructor.Mode.TOOLS).chat.completions.create(
            model=UNKNOWN_MODEL, response_model=City, messages=MESSAGES, max_retries=0)
    assert isinstance(api_error(caught), openai.NotFoundError)
    assert api_error(caught).status_code == 404


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_chain_failing_before_first_token_is_a_server_error(stream: bool) -> None:
    messages = [{"role": "user", "content": f"{CITY_PROMPT} {FAILING_PROMPT}"}]
    completions = client(instructor.Mode.TOOLS).chat.completions
    with pytest.raises(InstructorRetryException) as caught:
        if stream:
            for partial in completions.create_partial(model="auto", response_model=City, messages=messages,
                                                      max_retries=0):
                print(partial)
        else:
            completions.create(model="auto", response_model=City, messages=messages, max_retries=0)
    assert isinstance(api_error(caught), openai.InternalServerError)
    assert api_error(caught).status_code == CHAIN_FAILED_STATUS
    assert REQUEST_ID.match(api_error(caught).request_id or "")
