"""`/` is a landing page whose links work; the OpenAPI document is also at `/openapi.json`; the decision
endpoint answers a missing or bad key with a 401."""

from __future__ import annotations

import re

import httpx

from tests.live import LiveGateway


def test_the_landing_page_links_the_api_its_openapi_document_and_the_admin(live: LiveGateway) -> None:
    page = httpx.get(f"{live.base_url}/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert f"{live.api}</code>" in page.text
    links = set(re.findall(r'href="([^"]+)"', page.text))
    assert {"/openapi.json", "/api/v1/inference/openapi.json", "/admin/", "/portal/", f"{live.api}/models"} <= links
    assert httpx.post(f"{live.base_url}/").status_code == 405
    for link in links:
        url = link if link.startswith("http") else f"{live.base_url}{link}"
        assert httpx.get(url, follow_redirects=True).status_code == 200, link


def test_the_openapi_document_is_also_at_the_root(live: LiveGateway) -> None:
    root = httpx.get(f"{live.base_url}/openapi.json")
    assert root.status_code == 200 and root.headers["content-type"] == "application/json"
    assert root.json() == httpx.get(f"{live.api}/openapi.json").json()
    assert root.json()["openapi"] == "3.1.0"


def test_a_decision_without_a_key_or_with_a_bad_one_is_a_401(live: LiveGateway) -> None:
    url = f"{live.api}/routing-decisions/req-doesnotexist"
    missing = httpx.get(url)
    assert missing.status_code == 401
    assert missing.json()["error"]["code"] == "missing_api_key"
    assert "API key" in missing.json()["error"]["message"] and "portal" not in missing.json()["error"]["message"]
    bad = httpx.get(url, headers={"Authorization": "Bearer inf_not-a-key"})
    assert bad.status_code == 401 and bad.json()["error"]["type"] == "authentication_error"
