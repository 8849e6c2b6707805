"""The simulated upstream over a real socket (one server for the package), and how its tests talk to it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import orjson
import pytest

from providers.simulated import build_app
from providers.simulated.server import running_server
from tests.providers.conftest import make_profile

PROFILES = {
    "sim-plain": make_profile(),
    "sim-always": make_profile(reasoning="always_on", reasoning_tokens=50),
    "sim-switch": make_profile(reasoning="switchable", reasoning_tokens=30),
    "sim-fence": make_profile(json_in_fences=True),
    "sim-refuser": make_profile(refuses_on=("bioweapon",)),
    "sim-blind": make_profile(vision=False),
}

TOOLS = [
    {"type": "function", "function": {"name": "noop", "parameters": {"type": "object", "properties": {}}}},
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city", "days"],
            },
        },
    },
]


@pytest.fixture(scope="package")
def sim_url() -> Iterator[str]:
    with running_server(build_app(profiles=PROFILES, time_scale=0)) as url:
        yield url


@pytest.fixture
async def client(sim_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=sim_url, timeout=10) as c:
        yield c


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


async def chat(client: httpx.AsyncClient, **body: Any) -> httpx.Response:
    body.setdefault("model", "sim-plain")
    return await client.post("/openai/v1/chat/completions", json=body)


async def chat_chunks(client: httpx.AsyncClient, **body: Any) -> list[Any]:
    """Return the parsed `data:` payloads of a streamed OpenAI answer ("[DONE]" kept as a string)."""
    body.setdefault("model", "sim-plain")
    out: list[Any] = []
    async with client.stream("POST", "/openai/v1/chat/completions", json={**body, "stream": True}) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        async for line in r.aiter_lines():
            if line.startswith("data: "):
                data = line[6:]
                out.append(data if data == "[DONE]" else orjson.loads(data))
    return out


async def anthropic_events(client: httpx.AsyncClient, **body: Any) -> list[tuple[str, dict[str, Any]]]:
    body.setdefault("model", "sim-plain")
    body.setdefault("max_tokens", 1000)
    events: list[tuple[str, dict[str, Any]]] = []
    name = ""
    async with client.stream("POST", "/anthropic/v1/messages", json={**body, "stream": True}) as r:
        assert r.status_code == 200
        async for line in r.aiter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = orjson.loads(line[6:])
                assert data["type"] == name
                events.append((name, data))
    return events


async def wait_for_stats(client: httpx.AsyncClient, tag: str, key: str, value: int) -> dict[str, int]:
    deadline = time.monotonic() + 5
    while True:
        bucket = (await client.get("/stats")).json()["by_tag"].get(tag, {})
        if bucket.get(key) == value or time.monotonic() > deadline:
            return bucket
        await asyncio.sleep(0.02)
