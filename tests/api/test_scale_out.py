"""Several gateway processes on one database and one cache; the same ASGI app under uvicorn."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.live import LiveGateway, ServerProcess, poll, start_extra_server

MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def second(live: LiveGateway, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_extra_server(live, Path(tmp_path_factory.mktemp("second")), server="daphne")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def under_uvicorn(live: LiveGateway, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_extra_server(live, Path(tmp_path_factory.mktemp("uvicorn")), server="uvicorn")
    yield server
    server.stop()


def test_a_revocation_reaches_every_process(live: LiveGateway, second: ServerProcess) -> None:
    key = live.create_key(org="scale-org")
    headers = {"Authorization": f"Bearer {key}"}
    for api in (live.api, second.api):
        assert httpx.post(f"{api}/chat/completions", json={"model": "auto", "messages": MESSAGES}, headers=headers).status_code == 200
    live.shell(
        "from inferbase.accounts.models import ApiKey; from inferbase.accounts.services import api_key_revoke;"
        f" api_key_revoke(api_key=ApiKey.objects.get(prefix='{key[:12]}'))"
    )
    for api in (live.api, second.api):
        poll(lambda api=api: httpx.post(f"{api}/chat/completions", json={"model": "auto", "messages": MESSAGES},
                                        headers=headers).status_code == 401)


def test_a_decision_written_by_one_process_is_read_by_another(live: LiveGateway, second: ServerProcess) -> None:
    headers = {"Authorization": f"Bearer {live.api_key}"}
    body = httpx.post(f"{live.api}/chat/completions", json={"model": "auto", "messages": MESSAGES}, headers=headers).json()
    decision = poll(lambda: (r := httpx.get(f"{second.api}/routing-decisions/{body['id']}", headers=headers)).status_code == 200 and r.json())
    assert decision["request_id"] == body["id"]


def test_the_gateway_runs_under_uvicorn_too(live: LiveGateway, under_uvicorn: ServerProcess) -> None:
    headers = {"Authorization": f"Bearer {live.api_key}"}
    response = httpx.post(f"{under_uvicorn.api}/chat/completions", json={"model": "auto", "messages": MESSAGES}, headers=headers)
    assert response.status_code == 200
    events = []
    with httpx.stream("POST", f"{under_uvicorn.api}/chat/completions", headers=headers,
                      json={"model": "auto", "stream": True, "messages": MESSAGES}) as stream:
        for line in stream.iter_lines():
            if line.startswith("data: "):
                events.append(line[6:])
    assert json.loads(events[0])["object"] == "routing"
    assert events[-1] == "[DONE]"
    # uvicorn, too, reports http.disconnect once the response is complete: the stream is still served.
    request_id = json.loads(events[0])["id"]
    decision = poll(lambda: (r := httpx.get(f"{under_uvicorn.api}/routing-decisions/{request_id}", headers=headers))
                    .status_code == 200 and r.json())
    assert decision["final_disposition"] == "served"
