"""Prometheus metrics: counted by the writer from stored records, served at GET /metrics, added up over
several gateway processes in multiprocess mode, with bounded labels."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client import REGISTRY

from observability.metrics import metrics_observe
from tests.live import (
    LiveGateway,
    ServerProcess,
    poll,
    start_extra_server,
    start_live_gateway,
    stop_live_gateway,
)

LABELS = {"model": "m", "provider": "groq", "task": "coding", "disposition": "served", "stream": "true"}


def _record(**log: object) -> dict:
    return {"log": {"request_id": "req-secret", "model_served": "m", "route_served": "groq/m", "stream": True,
                    "final_disposition": "served", "status_code": 200, "prompt_tokens": 10, "completion_tokens": 5,
                    "cost_micros": 7, "latency_ms": 1200, "ttft_ms": 300,
                    "attempts": [{"outcome": "http_503"}, {"outcome": "served"}], **log},
            "decision": {"classifier_task_family": "coding"}}


def _value(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_a_stored_record_is_counted_once_under_its_labels() -> None:
    before = {n: _value(n, **LABELS) for n in ("inferbase_requests_total", "inferbase_fallbacks_total",
                                                  "inferbase_cost_micros_total", "inferbase_errors_total")}
    tokens = _value("inferbase_tokens_total", **LABELS, kind="completion")
    metrics_observe([_record()], queued=3)
    assert _value("inferbase_requests_total", **LABELS) == before["inferbase_requests_total"] + 1
    assert _value("inferbase_fallbacks_total", **LABELS) == before["inferbase_fallbacks_total"] + 1
    assert _value("inferbase_cost_micros_total", **LABELS) == before["inferbase_cost_micros_total"] + 7
    assert _value("inferbase_errors_total", **LABELS) == before["inferbase_errors_total"]
    assert _value("inferbase_tokens_total", **LABELS, kind="completion") == tokens + 5
    assert _value("inferbase_log_queue_depth") == 3
    timing = {"model": "m", "provider": "groq", "stream": "true"}
    assert _value("inferbase_ttft_seconds_bucket", **timing, le="0.5") >= 1


def test_an_error_is_counted_as_one() -> None:
    labels = {**LABELS, "disposition": "upstream_error", "model": "", "provider": ""}
    before = _value("inferbase_errors_total", **labels)
    metrics_observe([_record(status_code=502, final_disposition="upstream_error", model_served="", route_served="")])
    assert _value("inferbase_errors_total", **labels) == before + 1


def _scrape(base_url: str) -> str:
    response = httpx.get(f"{base_url}/metrics", timeout=10)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    return response.text


def _chat(api: str, key: str) -> str:
    response = httpx.post(f"{api}/chat/completions", headers={"Authorization": f"Bearer {key}"}, timeout=30,
                          json={"model": "meta-llama-3.3-70b", "messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 200
    return response.json()["id"]


def _served(text: str) -> float:
    """Return the served requests of meta-llama-3.3-70b, whatever the order of the labels."""
    lines = re.findall(r"^inferbase_requests_total\{([^}]*)\} ([0-9.e+]+)$", text, re.M)
    return sum(float(value) for labels, value in lines
               if 'disposition="served"' in labels and 'model="meta-llama-3.3-70b"' in labels)


def test_metrics_are_served_at_the_root_with_bounded_labels(live: LiveGateway) -> None:
    request_id = _chat(live.api, live.api_key)
    text = poll(lambda: _served(t := _scrape(live.base_url)) >= 1 and t, timeout=20)
    assert request_id not in text and live.api_key not in text
    assert "inferbase_circuit_breaker_open{route=" in text and "inferbase_log_spool_bytes" in text
    assert "# TYPE inferbase_request_latency_seconds histogram" in text


@pytest.fixture(scope="module")
def two_processes(tmp_path_factory: pytest.TempPathFactory,
                  simulated_url: str) -> Iterator[tuple[LiveGateway, ServerProcess]]:
    tmp = Path(tmp_path_factory.mktemp("prom"))
    (tmp / "prom").mkdir()
    gateway = start_live_gateway(tmp, INFERBASE_SIMULATED_URL=simulated_url, PROMETHEUS_MULTIPROC_DIR=str(tmp / "prom"))
    try:
        second = start_extra_server(gateway, tmp, server="daphne")
        try:
            yield gateway, second
        finally:
            second.stop()
    finally:
        stop_live_gateway(gateway)


def test_in_multiprocess_mode_each_process_reports_every_process(
        two_processes: tuple[LiveGateway, ServerProcess]) -> None:
    first, second = two_processes
    for api in (first.api, second.api, second.api):
        _chat(api, first.api_key)
    deadline = time.monotonic() + 20
    while True:  # the writers count after they store; both processes' counts appear on either
        seen = (_served(_scrape(first.base_url)), _served(_scrape(second.base_url)))
        if seen == (3.0, 3.0) or time.monotonic() > deadline:
            break
    assert seen == (3.0, 3.0)


@pytest.mark.parametrize("server", ["daphne", "uvicorn"])
def test_a_process_stopped_with_sigterm_leaves_no_live_gauge_behind(
        two_processes: tuple[LiveGateway, ServerProcess], tmp_path: Path, server: str) -> None:
    first, _ = two_processes
    directory = Path(first.env["PROMETHEUS_MULTIPROC_DIR"])
    extra = start_extra_server(first, tmp_path, server=server)
    pid = extra.process.pid
    try:
        _chat(extra.api, first.api_key)
        # The queue-depth gauge (livesum) has its file from start-up; the counters once the writer stores the request.
        poll(lambda: (directory / f"gauge_livesum_{pid}.db").exists()
             and (directory / f"counter_{pid}.db").exists(), timeout=20)
    finally:
        extra.stop()  # SIGTERM, as a supervisor stops it
    assert extra.process.returncode is not None
    poll(lambda: not list(directory.glob(f"gauge_live*_{pid}.db")), timeout=10)
    assert (directory / f"counter_{pid}.db").exists()  # what it served still counts in the totals
    assert _served(_scrape(first.base_url)) >= 1


def test_a_scrape_skips_a_metrics_file_another_process_is_creating(tmp_path: Path, settings) -> None:
    import json

    from prometheus_client import CollectorRegistry
    from prometheus_client.mmap_dict import MmapedDict

    from inferbase.metrics import _exposition

    written = MmapedDict(str(tmp_path / "counter_101.db"))  # a process that has counted one request
    written.write_value(json.dumps(["inferbase_t", "inferbase_t_total", {}, "t"]), 1.0, 0.0)
    written.close()
    (tmp_path / "counter_102.db").touch()  # another, between creating its file and sizing it
    settings.PROMETHEUS_MULTIPROC_DIR = str(tmp_path)
    body = _exposition(CollectorRegistry()).decode()
    assert "inferbase_t_total 1.0" in body
