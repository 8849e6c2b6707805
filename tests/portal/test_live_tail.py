"""The live tail of Logs: a WebSocket at /portal/ws/logs/, authenticated by the portal session, joined to the
viewer's organization's group; the log writer's thread publishes each stored request's row there without
waiting, and drops rows past its cap."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.core.cache import cache
from django.test import Client

from inferbase.accounts.models import Organization
from inferbase.portal import live
from observability.recorder import WriterThread

from .conftest import make_api_key, make_project, make_user

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _own_channel_layer(settings: Any) -> None:
    from channels.layers import channel_layers

    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    channel_layers.backends.clear()


def _session_cookie(organization: Organization | None, role: str = "analyst") -> bytes:
    client = Client()
    client.force_login(make_user(organization, role))
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}".encode()


def _socket(cookie: bytes | None) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
    if cookie is not None:
        headers.append((b"cookie", cookie))
    return WebsocketCommunicator(live.websocket_application(), "/portal/ws/logs/", headers=headers)


def _fresh_log(api_key: Any, **overrides: Any) -> dict[str, Any]:
    """A log as the pipeline hands it to the recorder (created_at in epoch seconds)."""
    return {"request_id": f"req-{uuid.uuid4().hex[:16]}", "created_at": time.time(),
            "organization_id": api_key.project.organization_id, "project_id": api_key.project_id,
            "api_key_id": api_key.pk, "model_requested": "auto", "model_served": "alpha-7b",
            "final_disposition": "served", "status_code": 200, "stream": False, "prompt_tokens": 12,
            "completion_tokens": 30, "cost_micros": 1234, "latency_ms": 250, "task": "coding", **overrides}


async def test_a_member_receives_its_organizations_rows_and_not_anothers(acme: Organization, globex: Organization,
                                                                         models: None) -> None:
    acme_key = await sync_to_async(lambda: make_api_key(make_project(acme, name="acme-web"), name="acme-frontend"))()
    globex_key = await sync_to_async(lambda: make_api_key(make_project(globex, name="globex-web")))()
    ours = _socket(await sync_to_async(_session_cookie)(acme))
    theirs = _socket(await sync_to_async(_session_cookie)(globex, "admin"))
    assert (await ours.connect())[0] and (await theirs.connect())[0]
    try:
        acme_log, globex_log = _fresh_log(acme_key), _fresh_log(globex_key)
        # As the log writer does it: in its own thread, handed the job by this loop.
        await WriterThread(name="test-writer").run(live.live_tail_publish, [acme_log, globex_log])
        message = await ours.receive_json_from(timeout=5)
        assert len(message["rows"]) == 1
        row = message["rows"][0]
        assert f'data-request-id="{acme_log["request_id"]}"' in row
        assert "Alpha 7B" in row and "acme-web" in row and "acme-frontend" in row
        other = await theirs.receive_json_from(timeout=5)
        assert [globex_log["request_id"] in r for r in other["rows"]] == [True]
        assert await ours.receive_nothing(timeout=0.2) and await theirs.receive_nothing(timeout=0.2)
    finally:
        await ours.disconnect()
        await theirs.disconnect()


async def test_an_anonymous_socket_is_refused(db: None) -> None:
    connected, code = await _socket(None).connect()
    assert not connected and code == 4401


async def test_a_user_of_no_organization_is_refused(db: None) -> None:
    connected, code = await _socket(await sync_to_async(_session_cookie)(None)).connect()
    assert not connected and code == 4403


async def test_another_sites_page_cannot_open_it(acme: Organization, settings: Any) -> None:
    settings.ALLOWED_HOSTS = ["testserver"]
    cookie = await sync_to_async(_session_cookie)(acme)
    communicator = WebsocketCommunicator(live.websocket_application(), "/portal/ws/logs/",
                                         headers=[(b"origin", b"http://evil.example"), (b"cookie", cookie)])
    connected, _ = await communicator.connect()
    assert not connected


async def test_publishing_never_waits_and_drops_past_the_cap(acme: Organization, models: None, monkeypatch: Any) -> None:
    key = await sync_to_async(lambda: make_api_key(make_project(acme)))()
    ours = _socket(await sync_to_async(_session_cookie)(acme))
    assert (await ours.connect())[0]
    try:
        monkeypatch.setattr(live, "_in_flight", live.MAX_IN_FLIGHT)
        before = live.dropped
        await WriterThread(name="test-writer").run(live.live_tail_publish, [_fresh_log(key), _fresh_log(key)])
        assert live.dropped == before + 2
        assert await ours.receive_nothing(timeout=0.2)
    finally:
        await ours.disconnect()
    # A loop that is not running (busy, or stopped) never holds the writer: the send is only scheduled.
    stalled = asyncio.new_event_loop()
    monkeypatch.setattr(live, "writer_job_loop", lambda: stalled)
    monkeypatch.setattr(live, "_in_flight", 0)
    await sync_to_async(live.live_tail_publish, thread_sensitive=False)([_fresh_log(key)])
    assert live._in_flight == 1  # handed over, not done
    stalled.close()


def test_outside_a_writer_job_nothing_is_published(acme: Organization, models: None) -> None:
    key = make_api_key(make_project(acme))
    before = (live._in_flight, live.dropped)
    live.live_tail_publish([_fresh_log(key)])  # no loop handed this thread a job: a no-op, no error
    assert (live._in_flight, live.dropped) == before


async def test_rows_are_rendered_only_for_an_organization_someone_watches(acme: Organization, globex: Organization,
                                                                          models: None, monkeypatch: Any) -> None:
    await cache.adelete(live.viewers_key(acme.pk))  # a mark an earlier test's viewer left (ids are reused)
    key = await sync_to_async(lambda: make_api_key(make_project(acme)))()
    rendered: list[list[int]] = []
    render = live.rendered_rows
    monkeypatch.setattr(live, "rendered_rows",
                        lambda logs: rendered.append([log["organization_id"] for log in logs]) or render(logs))
    theirs = _socket(await sync_to_async(_session_cookie)(globex))
    assert (await theirs.connect())[0]
    try:
        await WriterThread(name="test-writer").run(live.live_tail_publish, [_fresh_log(key)])
        assert rendered == []  # another organization's viewer does not make ours rendered
        ours = _socket(await sync_to_async(_session_cookie)(acme))
        assert (await ours.connect())[0]
        try:
            log = _fresh_log(key)
            await WriterThread(name="test-writer").run(live.live_tail_publish, [log])
            assert rendered == [[acme.pk]]
            message = await ours.receive_json_from(timeout=5)
            assert log["request_id"] in message["rows"][0]
        finally:
            await ours.disconnect()
    finally:
        await theirs.disconnect()
