"""The chat-completions consumer in-process, driven by Channels' HttpCommunicator: no server, no socket; the
simulated upstream answers through httpx.ASGITransport, and the log writer hands its records to a list."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from channels.db import database_sync_to_async
from channels.testing import HttpCommunicator
from django.conf import settings
from django.db import connections
from django.test import override_settings

from inferbase.accounts.services import api_key_create
from inferbase.api.consumer import ChatCompletionsConsumer
from inferbase.gateway.decisions import SharedDecisions
from inferbase.gateway.shared import SharedRedis
from inferbase.gateway.state import AppState, StateMiddleware
from observability.recorder import Recorder
from providers.http import UpstreamClients
from providers.simulated import build_app, load_profiles
from routing.services import catalog_load

pytestmark = pytest.mark.django_db(transaction=True)

PATH = "/api/v1/inference/chat/completions"
PINNED = "meta-llama-3.3-70b"


class Records(list):  # type: ignore[type-arg]
    """The log writer's store: what the consumer recorded, in order."""

    def __call__(self, batch: list[dict[str, Any]]) -> None:
        self.extend(batch)


@pytest.fixture(autouse=True)
async def close_thread_connections() -> AsyncIterator[None]:
    """Close what the `database_sync_to_async` thread opened, so that the test database can be dropped."""
    yield
    await database_sync_to_async(connections.close_all)()


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[Any, str, AppState, Records]]:
    """The consumer as inferbase.asgi wires it (its state in the scope), a key, its state and its records."""
    await database_sync_to_async(catalog_load)(catalog_path=Path(settings.INFERBASE_CATALOG_PATH),
                                               evidence_path=Path(settings.INFERBASE_EVIDENCE_PATH))
    created = await database_sync_to_async(api_key_create)(org_slug="acme", project_name="web")
    upstream = build_app(profiles=load_profiles(settings.INFERBASE_CATALOG_PATH), time_scale=0)
    records = Records()
    with override_settings(REDIS_URL=""):  # the consumer on its own: caches and counters in this process
        base = AppState.from_settings()
    state = dataclasses.replace(
        base,
        upstream=UpstreamClients(transport=httpx.ASGITransport(app=upstream, root_path="/simulated")),
        decisions=SharedDecisions(SharedRedis("", "test"), tmp_path / "decisions", 60),
        recorder=Recorder(records, tmp_path / "spool", linger=0),
    )
    yield StateMiddleware(ChatCompletionsConsumer.as_asgi(), state), created.raw_key, state, records
    await state.upstream.aclose()


async def _post(app: Any, key: str | None, body: Any, *, method: str = "POST") -> dict[str, Any]:
    headers = [(b"content-type", b"application/json")]
    if key is not None:
        headers.append((b"authorization", f"Bearer {key}".encode()))
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    communicator = HttpCommunicator(app, method, PATH, body=raw, headers=headers)
    response = await communicator.get_response(timeout=10)
    await communicator.wait(timeout=10)  # the consumer records the request once its response is out
    return response


async def _logged(state: AppState, records: Records) -> list[dict[str, Any]]:
    await state.recorder.drain(seconds=5)
    return [record["log"] for record in records]


def _headers(response: dict[str, Any]) -> dict[bytes, bytes]:
    return dict(response["headers"])


async def test_a_request_is_answered_and_recorded(served) -> None:  # type: ignore[no-untyped-def]
    app, key, state, records = served
    response = await _post(app, key, {"model": PINNED, "messages": [{"role": "user", "content": "hi"}]})
    assert response["status"] == 200
    body = json.loads(response["body"])
    assert body["object"] == "chat.completion" and body["model"] == PINNED
    assert body["choices"][0]["message"]["content"]
    assert _headers(response)[b"x-request-id"].decode() == body["id"]
    assert _headers(response)[b"x-inferbase-model"] == PINNED.encode()
    [log] = await _logged(state, records)
    assert (log["request_id"], log["status_code"], log["final_disposition"]) == (body["id"], 200, "served")
    assert [a["outcome"] for a in log["attempts"]] == ["served"]
    assert records[0]["decision"]["final_disposition"] == "served"


async def test_a_stream_is_sent_as_events_and_recorded(served) -> None:  # type: ignore[no-untyped-def]
    app, key, state, records = served
    response = await _post(app, key, {"model": PINNED, "stream": True, "messages": [{"role": "user", "content": "hi"}]})
    assert response["status"] == 200
    assert _headers(response)[b"content-type"].startswith(b"text/event-stream")
    frames = [frame[6:] for frame in response["body"].split(b"\n\n") if frame.startswith(b"data: ")]
    assert frames[-1] == b"[DONE]"
    objects = [json.loads(frame)["object"] for frame in frames[:-1]]
    assert objects[0] == "routing" and objects[-1] == "usage"
    assert set(objects[1:-1]) == {"chat.completion.chunk"}
    [log] = await _logged(state, records)
    assert log["stream"] is True and log["final_disposition"] == "served" and log["ttft_ms"] is not None


@pytest.mark.parametrize(("key", "body", "method", "status", "code"), [
    (None, {"model": PINNED, "messages": []}, "POST", 401, "missing_api_key"),
    ("inf_not-a-key", {"model": PINNED, "messages": [{"role": "user", "content": "hi"}]}, "POST", 401,
     "invalid_api_key"),
    ("KEY", b"{not json", "POST", 400, "invalid_json"),
    ("KEY", {"model": PINNED, "messages": [{"role": "user", "content": "hi"}], "colour": "red"}, "POST", 422,
     "unknown_parameter"),
    ("KEY", {"model": PINNED, "messages": []}, "GET", 405, "method_not_allowed"),
])
async def test_a_refused_request_gets_the_envelope_and_is_recorded_as_rejected(  # type: ignore[no-untyped-def]
        served, key: str | None, body: Any, method: str, status: int, code: str) -> None:
    app, raw_key, state, records = served
    response = await _post(app, raw_key if key == "KEY" else key, body, method=method)
    assert response["status"] == status
    error = json.loads(response["body"])["error"]
    assert error["code"] == code and set(error) == {"message", "type", "code", "param"}
    [log] = await _logged(state, records)
    assert (log["status_code"], log["final_disposition"], log["error_code"]) == (status, "rejected", code)


async def test_a_body_over_the_limit_is_refused_before_it_is_read_whole(served, settings) -> None:  # type: ignore[no-untyped-def]
    app, key, state, records = served
    settings.INFERBASE_MAX_BODY_BYTES = 1024
    response = await _post(app, key, {"model": PINNED, "messages": [{"role": "user", "content": "x" * 2000}]})
    assert response["status"] == 413 and json.loads(response["body"])["error"]["code"] == "body_too_large"
    [log] = await _logged(state, records)
    assert log["status_code"] == 413 and log["final_disposition"] == "rejected"


async def test_a_request_routing_cannot_serve_records_its_filter_trail(served) -> None:  # type: ignore[no-untyped-def]
    app, key, state, records = served
    response = await _post(app, key, {"model": "auto", "messages": [{"role": "user", "content": "hi"}],
                                      "routing": {"max_cost_micros": 0}})
    assert response["status"] >= 400
    [log] = await _logged(state, records)
    assert log["final_disposition"] == "not_routed"
    assert log["error_code"] == json.loads(response["body"])["error"]["code"]
    decision = records[0]["decision"]
    assert decision["final_disposition"] == "not_routed" and decision["chain_attempted"] == []
    assert decision["filter_trail"][-1]["step"] == "cost_ceiling" and decision["filter_trail"][-1]["out"] == 0


async def test_a_chain_that_fails_before_the_stream_starts_is_answered_with_its_status(served) -> None:  # type: ignore[no-untyped-def]
    app, key, state, records = served
    response = await _post(app, key, {"model": PINNED, "stream": True,
                                      "messages": [{"role": "user", "content": "[sim:fail=503] hi"}]})
    assert response["status"] == 502
    assert _headers(response)[b"content-type"] == b"application/json"
    assert json.loads(response["body"])["error"]["code"] == "upstream_error"
    [log] = await _logged(state, records)
    assert log["final_disposition"] == "upstream_error" and all(
        a["outcome"] == "http_503" for a in log["attempts"])
