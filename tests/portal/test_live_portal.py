"""The portal served by daphne (the live gateway): a login through the form with its CSRF token, then the CSV
export streamed over ASGI, holding the organization's requests and no one else's; a policy saved and a key
revoked in the portal reach every gateway process, with no restart; a guardrail check set in the portal's form
refuses a request."""

from __future__ import annotations

import csv
import io
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.live import LiveGateway, ServerProcess, poll, start_extra_server

from .html_forms import form_data

PASSWORD = "live portal password"


def _token(page: str) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]


def _logged_in(live: LiveGateway, username: str) -> httpx.Client:
    client = httpx.Client(base_url=live.base_url, timeout=30)
    token = _token(client.get("/portal/login/").text)
    response = client.post("/portal/login/", data={"username": username, "password": PASSWORD,
                                                   "csrfmiddlewaretoken": token})
    assert response.status_code == 302 and response.headers["location"] == "/portal/"
    return client


def test_csv_export_streams_through_daphne(live: LiveGateway, http: httpx.Client) -> None:
    username = f"exporter-{uuid.uuid4().hex[:6]}"
    live.manage("create_portal_user", "--org", "demo", "--role", "admin", "--username", username, "--password", PASSWORD)
    ours = http.post("/chat/completions", json={"model": "auto", "messages": [{"role": "user", "content": "hello"}]})
    other_key = live.create_key(org=f"elsewhere-{uuid.uuid4().hex[:6]}")
    theirs = httpx.post(f"{live.api}/chat/completions", headers={"Authorization": f"Bearer {other_key}"},
                        json={"model": "auto", "messages": [{"role": "user", "content": "hello"}]}, timeout=30)
    assert ours.status_code == theirs.status_code == 200
    client = _logged_in(live, username)

    def exported() -> list[str] | None:
        with client.stream("GET", "/portal/logs.csv") as response:
            assert response.status_code == 200
            assert response.headers["content-type"] == "text/csv; charset=utf-8"
            assert "content-length" not in response.headers  # streamed
            ids = [row["request_id"] for row in csv.DictReader(io.StringIO(response.read().decode()))]
        return ids if ours.json()["id"] in ids else None

    try:
        ids = poll(exported, timeout=20)
    finally:
        client.close()
    assert theirs.json()["id"] not in ids


@pytest.fixture(scope="module")
def second(live: LiveGateway, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """Another gateway process on the live gateway's database and cache."""
    server = start_extra_server(live, Path(tmp_path_factory.mktemp("portal-second")), server="daphne")
    yield server
    server.stop()


def _chat(api: str, key: str, content: str = "Say hello") -> httpx.Response:
    return httpx.post(f"{api}/chat/completions", headers={"Authorization": f"Bearer {key}"}, timeout=30, json={
        "model": "auto", "max_tokens": 200, "messages": [{"role": "user", "content": content}]})


def _routed_under(api: str, key: str, objective: str) -> dict | None:
    response = _chat(api, key)
    assert response.status_code == 200, response.text
    routing = response.json()["routing"]
    return routing if routing["optimize_mode"] == objective else None


def test_a_policy_saved_and_a_key_revoked_in_the_portal_reach_every_process(live: LiveGateway,
                                                                           second: ServerProcess) -> None:
    slug = f"reach-{uuid.uuid4().hex[:6]}"
    policy_name = f"Policy {slug}"
    key = live.create_key(org=slug, policy=policy_name)  # the policy's defaults: objective balanced
    username = f"admin-{slug}"
    live.manage("create_portal_user", "--org", slug, "--role", "admin", "--username", username, "--password", PASSWORD)
    apis = (live.api, second.api)
    for api in apis:  # each process now holds the policy as it was
        assert _routed_under(api, key, "balanced") is not None
    client = _logged_in(live, username)
    try:
        listing = client.get("/portal/policies/").text
        policy_path = re.search(rf'href="(/portal/policies/\d+/)">{re.escape(policy_name)}<', listing).group(1)  # type: ignore[union-attr]
        keys_page = client.get("/portal/keys/").text
        key_id = re.search(rf'<tr data-key-id="(\d+)"(?:(?!</tr>).)*?{re.escape(key[:12])}', keys_page,  # type: ignore[union-attr]
                           re.S).group(1)
        token = _token(client.get(f"{policy_path}edit/").text)
        saved = client.post(f"{policy_path}edit/", data={
            "csrfmiddlewaretoken": token, "name": policy_name, "allow_variants": "on", "objective": "cost",
            "quality_floor": "standard", "chain_length": "4", "first_token_timeout_ms": "15000",
            "total_deadline_ms": "60000", "structured_output_extraction": "on", "applies_to_keys": [key_id],
            "action": "save"})
        assert saved.status_code == 302 and saved.headers["location"] == policy_path
        for api in apis:  # no restart: each process picks the new version up on its next check
            routing = poll(lambda api=api: _routed_under(api, key, "cost"), timeout=10)
            assert routing["policy"]["name"] == policy_name

        revoked = client.post(f"/portal/keys/{key_id}/revoke/", data={"csrfmiddlewaretoken": token})
        assert revoked.status_code == 302
        for api in apis:
            poll(lambda api=api: _chat(api, key).status_code == 401, timeout=10)
    finally:
        client.close()


def test_an_input_pii_block_saved_in_the_portal_refuses_a_request_with_an_email(live: LiveGateway) -> None:
    slug = f"guard-{uuid.uuid4().hex[:6]}"
    policy_name = f"Policy {slug}"
    key = live.create_key(org=slug, policy=policy_name)  # no guardrail checks yet
    username = f"admin-{slug}"
    live.manage("create_portal_user", "--org", slug, "--role", "admin", "--username", username, "--password", PASSWORD)
    prompt = "Please write to ada@example.com about the launch"
    assert _chat(live.api, key, prompt).status_code == 200
    client = _logged_in(live, username)
    try:
        listing = client.get("/portal/policies/").text
        policy_path = re.search(rf'href="(/portal/policies/\d+/)">{re.escape(policy_name)}<', listing).group(1)  # type: ignore[union-attr]
        data = form_data(client.get(f"{policy_path}edit/").text, "policy-form")  # the form as the page fills it
        data.update({"guardrails_input_pii_action": ["block"], "guardrails_input_pii_price": ["50"],
                     "action": ["save"]})
        saved = client.post(f"{policy_path}edit/", data=data)
        assert saved.status_code == 302 and saved.headers["location"] == policy_path
    finally:
        client.close()

    def refused() -> httpx.Response | None:
        response = _chat(live.api, key, prompt)
        return response if response.status_code == 400 else None

    error = poll(refused, timeout=10).json()["error"]
    assert error["code"] == "guardrail_blocked"
    assert "guardrail check 'pii' on the input" in error["message"] and "email" in error["message"]
    assert _chat(live.api, key, "Say hello").status_code == 200  # nothing to find: served
