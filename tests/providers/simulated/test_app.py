"""The simulated upstream in process (mount prefix, delays, profiles, directives), and its request log."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import orjson

from providers.simulated import DEFAULT_PROFILE, SimProfile, build_app, load_profiles, parse_directives
from providers.simulated.server import running_server
from tests.providers.conftest import make_profile
from tests.providers.simulated.conftest import (
    PROFILES,
    chat,
    user,
)

# -- in-process ----------------------------------------------------------------------------------------


async def test_app_strips_its_mount_prefix() -> None:
    transport = httpx.ASGITransport(app=build_app(time_scale=0), root_path="/simulated")
    async with httpx.AsyncClient(transport=transport, base_url="http://sim") as c:
        assert (await c.get("/simulated/health")).status_code == 200


async def test_delays_follow_the_profile_and_time_scale() -> None:
    app = build_app(profiles={"slow": make_profile(ttft_ms=200, tokens_per_second=100.0)}, time_scale=0.5)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://sim") as c:
        started = time.monotonic()
        r = await c.post(
            "/openai/v1/chat/completions", json={"model": "slow", "messages": user("[sim:tokens=10]")}
        )
        elapsed = time.monotonic() - started
    assert r.status_code == 200
    assert 0.1 + 0.05 <= elapsed < 1.0  # (200 ms + 10 tokens at 100/s) x 0.5


def test_load_profiles_reads_the_catalog(tmp_path: Path) -> None:
    catalog = {
        "models": [
            {
                "id": "m1",
                "reasoning": "always_on",
                "typical_reasoning_tokens": 300,
                "capabilities": {"vision": False},
                "simulation": {
                    "ttft_ms": 200,
                    "tokens_per_second": 400,
                    "reasoning_tokens": 250,
                    "json_in_fences": True,
                    "refuses_on": ["Bioweapon"],
                },
            },
            {
                "id": "m2",
                "reasoning": "none",
                "capabilities": {},
                "simulation": {"ttft_ms": 10, "tokens_per_second": 50},
            },
        ]
    }
    path = tmp_path / "catalog.json"
    path.write_bytes(orjson.dumps(catalog))
    profiles = load_profiles(path)
    assert profiles["m1"] == SimProfile(200, 400.0, "always_on", 250, True, ("bioweapon",), False)
    assert profiles["m2"].reasoning == "none" and profiles["m2"].vision is True
    assert DEFAULT_PROFILE.reasoning == "none"


def test_parse_directives_applies_model_filters() -> None:
    d = parse_directives("x [sim:fail=503@a,b:v] [sim:stall_ms=40] [sim:tag=t1] [sim:tool_call=f]", "b:v")
    assert (d.fail, d.stall_ms, d.tag, d.tool_call) == (503, 40, "t1", "f")
    assert parse_directives("[sim:fail=503@a]", "b").fail is None
    assert parse_directives("[sim:fail=503@a]", "a:turbo").fail == 503
    assert parse_directives("no directives", "a").tag == "default"


# -- request log ------------------------------------------------------------------------------------


async def test_the_request_log_is_off_unless_asked_for(client: httpx.AsyncClient) -> None:
    await chat(client, messages=user("[sim:tag=unlogged] hi"))
    assert (await client.get("/debug/requests")).status_code == 404


async def test_the_request_log_keeps_the_last_bodies_received_in_each_wire() -> None:
    with running_server(build_app(profiles=PROFILES, time_scale=0, record_requests=2)) as url:
        async with httpx.AsyncClient(base_url=url, timeout=10) as c:
            await chat(c, messages=user("[sim:tag=first] one"), seed=1)
            await chat(c, messages=user("[sim:tag=logged] two"), seed=2)
            await c.post("/anthropic/v1/messages", json={"model": "sim-plain", "max_tokens": 9,
                                                         "messages": user("[sim:tag=logged] three")})
            everything = (await c.get("/debug/requests")).json()["data"]
            tagged = (await c.get("/debug/requests", params={"tag": "logged"})).json()["data"]
    # Bounded: the oldest is gone. Each entry is the body exactly as received.
    assert [(r["wire"], r["tag"]) for r in everything] == [("openai", "logged"), ("anthropic", "logged")]
    assert everything[0]["body"] == {"model": "sim-plain", "messages": user("[sim:tag=logged] two"), "seed": 2}
    assert everything[1]["body"]["max_tokens"] == 9
    assert tagged == everything
