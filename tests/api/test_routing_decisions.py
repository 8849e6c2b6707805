"""GET /routing-decisions/{id} answers as soon as the client has the response, from every gateway process,
for the same organization only, whether the log writer has written the row yet or not."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.live import (
    LiveGateway,
    ServerProcess,
    poll,
    start_extra_server,
    start_live_gateway,
    stop_live_gateway,
)

MESSAGES = [{"role": "user", "content": "What is machine learning?"}]


@pytest.fixture(scope="module")
def unwritten(tmp_path_factory: pytest.TempPathFactory, simulated_url: str) -> Iterator[LiveGateway]:
    """A gateway whose log writer waits a minute before it writes: every GET here is answered before the row
    exists, so from the shared copy alone."""
    gateway = start_live_gateway(Path(tmp_path_factory.mktemp("unwritten")), INFERBASE_SIMULATED_URL=simulated_url,
                                 INFERBASE_RECORD_LINGER_SECONDS="60")
    yield gateway
    stop_live_gateway(gateway)


@pytest.fixture(scope="module")
def second(unwritten: LiveGateway, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """Another gateway process on the same database and cache."""
    server = start_extra_server(unwritten, Path(tmp_path_factory.mktemp("second")), server="daphne")
    yield server
    server.stop()


def _headers(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _get(api: str, key: str, request_id: str) -> httpx.Response:
    return httpx.get(f"{api}/routing-decisions/{request_id}", headers=_headers(key))


def test_a_decision_is_readable_as_soon_as_its_response_ends(unwritten: LiveGateway) -> None:
    for _ in range(3):
        response = httpx.post(f"{unwritten.api}/chat/completions", json={"model": "auto", "messages": MESSAGES},
                              headers=_headers(unwritten.api_key), timeout=30)
        body = response.json()
        decision = _get(unwritten.api, unwritten.api_key, body["id"])
        assert decision.status_code == 200, decision.text
        shown = decision.json()
        assert shown["request_id"] == body["id"]
        assert shown["final_disposition"] == "served"
        assert shown["routing"]["model"] == body["model"] == body["routing"]["model"]
        assert shown["attempts"][-1]["outcome"] == "served"
        assert shown["filter_trail"][0]["step"] == "pool_loaded" and shown["created_at"]
    assert unwritten.record_counts() == (0, 0)  # all of that came from the shared copies


def test_a_streamed_decision_is_readable_once_the_sdk_has_read_the_stream(unwritten: LiveGateway) -> None:
    import openai

    with openai.OpenAI(api_key=unwritten.api_key, base_url=unwritten.api, max_retries=0, timeout=30) as client:
        stream = client.chat.completions.create(model="auto", messages=MESSAGES, stream=True)
        ids = {chunk.id for chunk in stream} - {None}  # the routing event has no id
    [request_id] = ids
    decision = _get(unwritten.api, unwritten.api_key, request_id)
    assert decision.status_code == 200, decision.text
    assert decision.json()["request_id"] == request_id


def test_a_failed_request_has_its_decision_at_once_too(unwritten: LiveGateway) -> None:
    response = httpx.post(f"{unwritten.api}/chat/completions", headers=_headers(unwritten.api_key), timeout=30,
                          json={"model": "meta-llama-3.3-70b", "messages": [{"role": "user", "content": "hi [sim:fail=500]"}]})
    assert response.status_code == 502
    decision = _get(unwritten.api, unwritten.api_key, response.headers["x-request-id"])
    assert decision.status_code == 200, decision.text
    assert decision.json()["final_disposition"] == "upstream_error"


def test_another_process_reads_the_decision_at_once(unwritten: LiveGateway, second: ServerProcess) -> None:
    body = httpx.post(f"{unwritten.api}/chat/completions", json={"model": "auto", "messages": MESSAGES},
                      headers=_headers(unwritten.api_key), timeout=30).json()
    decision = _get(second.api, unwritten.api_key, body["id"])
    assert decision.status_code == 200, decision.text
    assert decision.json()["request_id"] == body["id"]


def test_another_organization_gets_a_404_for_the_copy_too(unwritten: LiveGateway) -> None:
    body = httpx.post(f"{unwritten.api}/chat/completions", json={"model": "auto", "messages": MESSAGES},
                      headers=_headers(unwritten.api_key), timeout=30).json()
    outsider = unwritten.create_key(org="outsider-org")
    response = _get(unwritten.api, outsider, body["id"])
    missing = _get(unwritten.api, outsider, "req-0123456789abcdef")
    assert response.status_code == missing.status_code == 404
    assert response.json()["error"]["code"] == missing.json()["error"]["code"] == "not_found"
    assert _get(unwritten.api, unwritten.api_key, body["id"]).status_code == 200


def _copy_exists(gateway: LiveGateway, request_id: str) -> bool:
    if gateway.env.get("REDIS_URL"):
        import redis

        with redis.Redis.from_url(gateway.env["REDIS_URL"]) as client:
            return bool(client.exists(f"{gateway.env['INFERBASE_CACHE_PREFIX']}:decision:{request_id}"))
    return (Path(gateway.env["INFERBASE_CACHE_DIR"]) / "decisions" / f"{request_id}.json").exists()


def test_the_copy_reads_as_the_row_and_goes_once_the_row_is_written(live: LiveGateway) -> None:
    headers = _headers(live.api_key)
    body = httpx.post(f"{live.api}/chat/completions", json={"model": "auto", "messages": MESSAGES}, headers=headers,
                      timeout=30).json()
    at_once = _get(live.api, live.api_key, body["id"])
    assert at_once.status_code == 200
    poll(lambda: not _copy_exists(live, body["id"]), timeout=20)
    from_row = _get(live.api, live.api_key, body["id"])
    assert from_row.json() == at_once.json()


@pytest.mark.skipif(bool(os.environ.get("REDIS_URL")), reason="the copies live in Redis")
def test_a_request_id_that_is_not_one_reads_no_file(live: LiveGateway) -> None:
    response = _get(live.api, live.api_key, "..%2F..%2Fkey")
    assert response.status_code == 404
