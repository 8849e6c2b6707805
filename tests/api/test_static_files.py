"""The gateway serves the admin's static files itself (WhiteNoise), as `make run` and production run it."""

from __future__ import annotations

import httpx

from tests.live import LiveGateway


def test_the_admin_stylesheet_is_served(live: LiveGateway) -> None:
    response = httpx.get(f"{live.base_url}/static/admin/css/base.css")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/css")
    assert "max-age" in response.headers["cache-control"]
    assert b"body" in response.content


def test_the_admin_login_page_links_a_stylesheet_that_is_served(live: LiveGateway) -> None:
    page = httpx.get(f"{live.base_url}/admin/login/")
    assert page.status_code == 200
    assert 'href="/static/admin/css/base.css"' in page.text
    assert httpx.head(f"{live.base_url}/static/admin/css/login.css").status_code == 200


def test_a_missing_static_file_is_a_404(live: LiveGateway) -> None:
    assert httpx.get(f"{live.base_url}/static/admin/css/no-such-file.css").status_code == 404


def test_the_portal_login_page_links_its_stylesheet_that_is_served(live: LiveGateway) -> None:
    page = httpx.get(f"{live.base_url}/portal/login/")
    assert page.status_code == 200 and 'href="/static/portal/portal.css"' in page.text
    css = httpx.get(f"{live.base_url}/static/portal/portal.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css") and b".topbar" in css.content
