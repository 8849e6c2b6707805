"""GET /models/{id} with its evidence, over a live gateway that runs the periodic tasks in-process (the
embedded default): traffic in, samples and then traffic figures out, within the deadline."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.live import LiveGateway, poll, start_live_gateway, stop_live_gateway

MODEL = "meta-llama-3.3-70b"
ROUTE = f"simulated/{MODEL}"


@pytest.fixture(scope="module")
def evidence_gateway(tmp_path_factory: pytest.TempPathFactory, simulated_url: str) -> Iterator[LiveGateway]:
    gateway = start_live_gateway(Path(tmp_path_factory.mktemp("evidence")), INFERBASE_SIMULATED_URL=simulated_url,
                                 INFERBASE_SCHEDULER="true", INFERBASE_EVIDENCE_REFRESH_SECONDS="1",
                                 INFERBASE_EVIDENCE_MIN_SAMPLES="3")
    try:
        yield gateway
    finally:
        stop_live_gateway(gateway)


def _route(gateway: LiveGateway) -> dict:
    body = httpx.get(f"{gateway.api}/models/{MODEL}", timeout=10).json()
    return next(r for r in body["evidence"]["routes"] if r["route"] == ROUTE)


def _chat(gateway: LiveGateway) -> dict:
    response = httpx.post(f"{gateway.api}/chat/completions", headers={"Authorization": f"Bearer {gateway.api_key}"},
                          json={"model": MODEL, "stream": True, "messages": [{"role": "user", "content": "hi"}]},
                          timeout=30)
    assert response.status_code == 200
    return httpx.Response(200, content=response.text.split("\n\n")[0].removeprefix("data: ")).json()


def test_the_model_object_carries_its_evidence(evidence_gateway: LiveGateway) -> None:
    body = httpx.get(f"{evidence_gateway.api}/models/{MODEL}").json()
    assert (body["id"], body["object"]) == (MODEL, "model")
    route = next(r for r in body["evidence"]["routes"] if r["route"] == ROUTE)
    assert route["provider"] == "simulated" and route["cooldown_until"] is None
    assert set(route["latency"]) == {"first_token_ms_p50", "first_token_ms_p90", "end_to_end_ms_p50",
                                     "output_tokens_per_s", "samples", "source", "window", "updated_at"}
    assert set(route["failures"]) == {"error_rate", "timeout_rate", "truncation_rate", "samples"}
    coding = body["evidence"]["benchmarks"]["coding"]
    assert coding["source"].startswith("LiveBench") and coding["as_of"] == "2025-09"
    assert coding["url"] == "https://livebench.ai/" and 0 <= coding["score"] <= 1


def test_samples_grow_within_60_seconds_of_traffic_and_become_the_routes_figures(
        evidence_gateway: LiveGateway) -> None:
    before = _route(evidence_gateway)["latency"]["samples"]
    for _ in range(4):
        _chat(evidence_gateway)
    latency = poll(lambda: (lat := _route(evidence_gateway)["latency"])["samples"] >= before + 4 and lat,
                   timeout=60, interval=0.25)
    assert latency["source"] == "traffic" and latency["first_token_ms_p50"] is not None
    assert latency["window"] == "last 3600 s, at most 500 samples" and latency["updated_at"]
    # The next decision ranks the route on what traffic measured (a streamed, non-thinking request).
    routing = poll(lambda: (r := _chat(evidence_gateway))["expected_wait_ms"] == latency["first_token_ms_p50"] and r,
                   timeout=10)
    assert routing["wait_basis"] == "first_token"


def test_auto_has_no_evidence_block_and_an_unknown_model_is_a_404(evidence_gateway: LiveGateway) -> None:
    assert "evidence" not in httpx.get(f"{evidence_gateway.api}/models/auto").json()
    assert httpx.get(f"{evidence_gateway.api}/models/nope").status_code == 404
