"""At SIGTERM or SIGINT every queued log record and decision is written, or spooled when the database refuses
and replayed at the next start; under daphne (no ASGI lifespan) and uvicorn alike."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.live import (
    LiveGateway,
    database_locked,
    poll,
    start_extra_server,
    start_live_gateway,
    stop_live_gateway,
)

MESSAGES = [{"role": "user", "content": "hi"}]
# The writer would wait this long for more records: at the signal, everything sent is still queued.
QUEUED = {"INFERBASE_RECORD_LINGER_SECONDS": "60"}


def _send(api: str, key: str, n: int) -> set[str]:
    """Send n requests (every other one streamed) and read each to its end; return their ids."""
    ids = set()
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(headers=headers, timeout=30) as client:
        for i in range(n):
            body = {"model": "auto", "messages": MESSAGES, "stream": i % 2 == 1}
            response = client.post(f"{api}/chat/completions", json=body)
            assert response.status_code == 200
            ids.add(response.headers["x-request-id"])
    return ids


def _stored(gateway: LiveGateway, ids: set[str]) -> tuple[set[str], set[str]]:
    out = gateway.shell(
        "from observability.models import RequestLog, RoutingDecision; import json; "
        f"ids = {sorted(ids)!r}; "
        "print(json.dumps([sorted(RequestLog.objects.filter(request_id__in=ids).values_list('request_id', flat=True)),"
        " sorted(RoutingDecision.objects.filter(request_id__in=ids).values_list('request_id', flat=True))]))")
    logs, decisions = json.loads(out)
    return set(logs), set(decisions)


def _stop(process: subprocess.Popen[bytes], signum: int) -> None:
    process.send_signal(signum)
    process.wait(timeout=60)


@pytest.fixture
def gateway(tmp_path: Path, simulated_url: str):  # type: ignore[no-untyped-def]
    gateway = start_live_gateway(tmp_path, INFERBASE_SIMULATED_URL=simulated_url, **QUEUED)
    yield gateway
    stop_live_gateway(gateway)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_daphne_writes_every_queued_record_before_it_exits(gateway: LiveGateway, signum: int) -> None:
    ids = _send(gateway.api, gateway.api_key, 6)
    assert gateway.process is not None
    _stop(gateway.process, signum)
    assert _stored(gateway, ids) == (ids, ids)


def test_a_request_in_flight_at_the_signal_is_recorded_too(gateway: LiveGateway) -> None:
    assert gateway.process is not None
    ids = _send(gateway.api, gateway.api_key, 2)
    body = {"model": "auto", "stream": True,
            "messages": [{"role": "user", "content": "Tell me a story [sim:tokens=40] [sim:idle_ms=30000]"}]}
    with httpx.stream("POST", f"{gateway.api}/chat/completions", json=body, timeout=60,
                      headers={"Authorization": f"Bearer {gateway.api_key}"}) as response:
        ids.add(response.headers["x-request-id"])
        lines = response.iter_lines()
        while '"content"' not in next(lines):
            pass  # the answer has started; the upstream now goes quiet
        gateway.process.send_signal(signal.SIGTERM)
        with pytest.raises(httpx.HTTPError):
            for _ in lines:
                pass
    gateway.process.wait(timeout=60)
    assert _stored(gateway, ids) == (ids, ids)


def test_uvicorn_writes_every_queued_record_before_it_exits(gateway: LiveGateway, tmp_path: Path) -> None:
    server = start_extra_server(gateway, tmp_path, server="uvicorn")
    try:
        ids = _send(server.api, gateway.api_key, 6)
        _stop(server.process, signal.SIGTERM)
    finally:
        server.stop()
    assert _stored(gateway, ids) == (ids, ids)


def test_records_the_database_refuses_at_shutdown_are_spooled_and_replayed_at_the_next_start(
        tmp_path: Path, simulated_url: str) -> None:
    gateway = start_live_gateway(tmp_path, INFERBASE_SIMULATED_URL=simulated_url,
                                 INFERBASE_SHUTDOWN_WRITE_SECONDS="1", **QUEUED)
    try:
        ids = _send(gateway.api, gateway.api_key, 6)
        assert gateway.process is not None
        with database_locked(gateway):
            _stop(gateway.process, signal.SIGTERM)
        spool = Path(gateway.env["INFERBASE_SPOOL_DIR"])
        assert list(spool.glob("records-*.jsonl"))
        assert _stored(gateway, ids) == (set(), set())
        restarted = start_extra_server(gateway, tmp_path, server="daphne")
        try:
            # No request needed: the writer replays the spool when the server starts.
            poll(lambda: _stored(gateway, ids) == (ids, ids), timeout=60, interval=0.5)
        finally:
            restarted.stop()
    finally:
        stop_live_gateway(gateway)
