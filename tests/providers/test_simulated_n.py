"""The simulated upstream's OpenAI wire answers n choices, whole and streamed, as OpenAI does."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import orjson
import pytest

from providers.simulated import build_app
from providers.simulated.server import running_server
from tests.providers.simulated.conftest import PROFILES

MESSAGES = [{"role": "user", "content": "hello [sim:tokens=10]"}]


@pytest.fixture(scope="module")
def sim_url() -> Iterator[str]:
    with running_server(build_app(profiles=PROFILES, time_scale=0)) as url:
        yield url


def test_openai_wire_answers_n_choices_and_bills_each(sim_url: str) -> None:
    body = httpx.post(f"{sim_url}/openai/v1/chat/completions",
                      json={"model": "sim-plain", "n": 3, "messages": MESSAGES}).json()
    assert [c["index"] for c in body["choices"]] == [0, 1, 2]
    assert all(c["message"]["content"].startswith("[simulated sim-plain]") for c in body["choices"])
    assert body["usage"]["completion_tokens"] == 30


def test_openai_wire_streams_one_chunk_per_choice(sim_url: str) -> None:
    chunks = []
    with httpx.stream("POST", f"{sim_url}/openai/v1/chat/completions",
                      json={"model": "sim-plain", "n": 2, "stream": True, "stream_options": {"include_usage": True},
                            "messages": MESSAGES}) as response:
        for line in response.iter_lines():
            if line.startswith("data: {"):
                chunks.append(orjson.loads(line[6:]))
    texts = {0: "", 1: ""}
    finishes = {}
    for chunk in chunks[:-1]:
        (choice,) = chunk["choices"]
        texts[choice["index"]] += choice["delta"].get("content") or ""
        if choice["finish_reason"]:
            finishes[choice["index"]] = choice["finish_reason"]
    assert texts[0] == texts[1] and texts[0].startswith("[simulated sim-plain]")
    assert finishes == {0: "stop", 1: "stop"}
    assert chunks[-1]["usage"]["completion_tokens"] == 20


def test_openai_wire_refuses_a_bad_n(sim_url: str) -> None:
    response = httpx.post(f"{sim_url}/openai/v1/chat/completions",
                          json={"model": "sim-plain", "n": 0, "messages": MESSAGES})
    assert response.status_code == 400
