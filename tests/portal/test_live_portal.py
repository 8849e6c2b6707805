"""The portal served by daphne (the live gateway): a login through the form with its CSRF token, then the CSV
export streamed over ASGI, holding the organization's requests and no one else's."""

from __future__ import annotations

import csv
import io
import re
import uuid

import httpx

from tests.live import LiveGateway, poll

PASSWORD = "live portal password"


def _logged_in(live: LiveGateway, username: str) -> httpx.Client:
    client = httpx.Client(base_url=live.base_url, timeout=30)
    page = client.get("/portal/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
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
