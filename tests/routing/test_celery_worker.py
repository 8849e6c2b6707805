"""A real Celery worker on the real Redis broker runs the evidence task end to end: traffic in, evidence
out, the snapshot bumped and picked up by the gateway (production's path; the embedded scheduler has its
own test in tests/api/test_model_evidence.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from tests.live import REPO, LiveGateway, poll, start_live_gateway, stop_live_gateway, stop_process

pytestmark = pytest.mark.skipif(not os.environ.get("REDIS_URL"),
                                reason="needs REDIS_URL: a real Celery worker on the Redis broker (CI's second run)")

MODEL = "qwen3-32b"
ROUTE = f"simulated/{MODEL}"


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory, simulated_url: str) -> Iterator[LiveGateway]:
    live = start_live_gateway(Path(tmp_path_factory.mktemp("celery")), INFERBASE_SIMULATED_URL=simulated_url,
                              INFERBASE_SCHEDULER="false", INFERBASE_EVIDENCE_MIN_SAMPLES="3")
    try:
        yield live
    finally:
        stop_live_gateway(live)


@pytest.fixture(scope="module")
def worker(gateway: LiveGateway, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`celery -A inferbase worker` on a queue of its own, with the gateway's database and cache."""
    queue = f"evidence-{uuid.uuid4().hex[:8]}"
    log = (Path(tmp_path_factory.mktemp("worker")) / "worker.log").open("wb")
    process = subprocess.Popen([sys.executable, "-m", "celery", "-A", "inferbase", "worker", "-Q", queue,
                                "--pool", "solo", "--without-gossip", "--without-mingle", "--loglevel", "INFO"],
                               cwd=REPO, env=gateway.env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield queue
    finally:
        stop_process(process)
        log.close()


def _stream(gateway: LiveGateway) -> dict:
    response = httpx.post(f"{gateway.api}/chat/completions", headers={"Authorization": f"Bearer {gateway.api_key}"},
                          json={"model": MODEL, "stream": True, "extended_thinking": False,
                                "messages": [{"role": "user", "content": "hi"}]}, timeout=30)
    assert response.status_code == 200
    return orjson.loads(response.text.split("\n\n")[0].removeprefix("data: "))


def _latency(gateway: LiveGateway) -> dict:
    body = httpx.get(f"{gateway.api}/models/{MODEL}", timeout=10).json()
    return next(r for r in body["evidence"]["routes"] if r["route"] == ROUTE)["latency"]


def test_a_worker_turns_traffic_into_evidence_and_the_gateway_ranks_on_it(gateway: LiveGateway,
                                                                            worker: str) -> None:
    from inferbase.celery import app

    prior = _stream(gateway)["expected_wait_ms"]
    version = gateway.shell("from django.core.cache import cache; from routing.snapshot import VERSION_KEY; "
                            "print(cache.get(VERSION_KEY))")
    for _ in range(4):
        _stream(gateway)

    def measured() -> dict | None:
        app.send_task("routing.tasks.route_evidence_refresh", queue=worker)
        latency = _latency(gateway)
        return latency if latency["source"] == "traffic" and latency["samples"] >= 5 else None

    latency = poll(measured, timeout=60, interval=1.0)
    assert latency["first_token_ms_p50"] is not None
    assert gateway.shell("from django.core.cache import cache; from routing.snapshot import VERSION_KEY; "
                         "print(cache.get(VERSION_KEY))") != version
    routing = poll(lambda: (r := _stream(gateway))["expected_wait_ms"] == latency["first_token_ms_p50"] and r,
                   timeout=10)
    assert routing["expected_wait_ms"] != prior and routing["wait_basis"] == "first_token"
