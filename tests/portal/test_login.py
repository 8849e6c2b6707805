"""Login, logout, password change; failed logins throttled; CSRF on every form."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from inferbase.accounts.models import Organization

from .conftest import PASSWORD, make_user

pytestmark = pytest.mark.django_db


def _login(client: Client, username: str, password: str, address: str = "10.0.0.1"):  # type: ignore[no-untyped-def]
    return client.post("/portal/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def test_login_page_renders_a_form_with_a_csrf_token(db: None) -> None:
    response = Client().get("/portal/login/")
    assert response.status_code == 200
    assert b'name="csrfmiddlewaretoken"' in response.content and b'name="password"' in response.content


def test_login_lands_on_logs(acme: Organization) -> None:
    make_user(acme, username="ada")
    client = Client()
    response = _login(client, "ada", PASSWORD)
    assert response.status_code == 302 and response["Location"] == "/portal/"
    assert client.get("/portal/").url == "/portal/logs/"
    assert client.get("/portal/logs/").status_code == 200


def test_anonymous_visitor_is_sent_to_login_with_next(db: None) -> None:
    response = Client().get("/portal/logs/?task=coding")
    assert response.status_code == 302
    assert response["Location"] == "/portal/login/?next=/portal/logs/%3Ftask%3Dcoding"


def test_wrong_password_is_refused(acme: Organization) -> None:
    make_user(acme, username="ada")
    response = _login(Client(), "ada", "wrong")
    assert response.status_code == 200
    assert b"Please enter a correct username and password" in response.content


def test_login_is_refused_after_five_failures_for_a_username(acme: Organization) -> None:
    make_user(acme, username="ada")
    for attempt in range(5):
        _login(Client(), "ada", f"wrong{attempt}", address=f"10.0.0.{attempt}")
    # Now even the right password, from a new address, is refused until the window ends.
    response = _login(Client(), "ada", PASSWORD, address="10.9.9.9")
    assert response.status_code == 200
    assert b"Too many failed logins for this username or from this address. Try again in 15 minutes." in response.content
    assert "_auth_user_id" not in response.wsgi_request.session
    # Another username is not affected.
    make_user(acme, username="bea")
    assert _login(Client(), "bea", PASSWORD, address="10.9.9.9").status_code == 302


def test_login_is_refused_after_the_failures_allowed_from_one_address(acme: Organization, settings) -> None:  # type: ignore[no-untyped-def]
    settings.INFERBASE_LOGIN_FAILURES_PER_ADDRESS = 3
    make_user(acme, username="ada")
    for attempt in range(3):
        _login(Client(), f"guess{attempt}", "wrong", address="10.0.0.7")
    assert b"Too many failed logins" in _login(Client(), "ada", PASSWORD, address="10.0.0.7").content
    assert _login(Client(), "ada", PASSWORD, address="10.0.0.8").status_code == 302


def test_a_successful_login_forgets_the_usernames_failures(acme: Organization) -> None:
    make_user(acme, username="ada")
    for attempt in range(4):
        _login(Client(), "ada", "wrong", address=f"10.0.1.{attempt}")
    assert _login(Client(), "ada", PASSWORD, address="10.0.2.1").status_code == 302
    for attempt in range(4):
        _login(Client(), "ada", "wrong", address=f"10.0.3.{attempt}")
    assert _login(Client(), "ada", PASSWORD, address="10.0.4.1").status_code == 302


def test_login_without_csrf_token_is_refused(acme: Organization) -> None:
    make_user(acme, username="ada")
    client = Client(enforce_csrf_checks=True)
    response = client.post("/portal/login/", {"username": "ada", "password": PASSWORD})
    assert response.status_code == 403


def test_logout_needs_a_post_with_csrf_and_ends_the_session(acme: Organization) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_user(acme))
    assert client.get("/portal/logout/").status_code == 405
    assert client.post("/portal/logout/").status_code == 403  # no token
    page = client.get("/portal/logs/")
    token = page.context["csrf_token"]
    response = client.post("/portal/logout/", {"csrfmiddlewaretoken": str(token)})
    assert response.status_code == 302 and response["Location"] == "/portal/login/"
    assert client.get("/portal/logs/").status_code == 302


def test_password_change(acme: Organization) -> None:
    user = make_user(acme)
    client = Client()
    client.force_login(user)
    assert b'name="csrfmiddlewaretoken"' in client.get("/portal/password/").content
    response = client.post("/portal/password/", {"old_password": PASSWORD, "new_password1": "a new secret 42",
                                                 "new_password2": "a new secret 42"})
    assert response.status_code == 302 and response["Location"] == "/portal/password/done/"
    user.refresh_from_db()
    assert user.check_password("a new secret 42")
    assert client.get("/portal/logs/").status_code == 200  # the session survives the change


def test_password_change_with_a_wrong_old_password_says_so(acme: Organization) -> None:
    client = Client()
    client.force_login(make_user(acme))
    response = client.post("/portal/password/", {"old_password": "nope", "new_password1": "x1y2z3w4",
                                                 "new_password2": "x1y2z3w4"})
    assert response.status_code == 200 and b"Your old password was entered incorrectly" in response.content


def test_user_of_no_organization_is_refused_with_a_reason(db: None) -> None:
    client = Client()
    client.force_login(User.objects.create_user("staff", password="pw"))
    response = client.get("/portal/logs/")
    assert response.status_code == 403 and b"Your account belongs to no organization" in response.content


def test_cookie_flags_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    import inferbase.settings as settings_module

    monkeypatch.setenv("SESSION_COOKIE_SECURE", "true")
    monkeypatch.setenv("CSRF_COOKIE_SECURE", "yes")
    try:
        reloaded = importlib.reload(settings_module)
        assert reloaded.SESSION_COOKIE_SECURE is True and reloaded.CSRF_COOKIE_SECURE is True
        monkeypatch.setenv("SESSION_COOKIE_SECURE", "maybe")
        from django.core.exceptions import ImproperlyConfigured

        with pytest.raises(ImproperlyConfigured, match="SESSION_COOKIE_SECURE must be a boolean"):
            importlib.reload(settings_module)
    finally:
        monkeypatch.delenv("SESSION_COOKIE_SECURE")
        monkeypatch.delenv("CSRF_COOKIE_SECURE")
        importlib.reload(settings_module)


def test_secure_session_cookie_is_sent_secure(acme: Organization, settings) -> None:  # type: ignore[no-untyped-def]
    settings.SESSION_COOKIE_SECURE = True
    make_user(acme, username="ada")
    response = _login(Client(), "ada", PASSWORD)
    cookie = response.cookies["sessionid"]
    assert cookie["secure"] is True and cookie["httponly"] is True and cookie["samesite"] == "Lax"


def test_every_portal_url_refuses_a_post_without_its_csrf_token(acme: Organization) -> None:
    # Every route, not a list of the forms known today: a form added later without CSRF protection fails here.
    from django.urls import reverse

    from inferbase.portal import urls as portal_urls
    from routing.models import PolicyVersion, RoutingPolicy

    from .conftest import make_api_key, make_project

    project = make_project(acme)
    key = make_api_key(project)
    policy = RoutingPolicy.objects.create(organization=acme, name="P")
    PolicyVersion.objects.create(policy=policy, number=1, fields={"name": "P"})
    args = {"log_detail": ["req-0000000000000000"], "policy_detail": [policy.pk], "policy_edit": [policy.pk],
            "policy_restore": [policy.pk, 1], "key_edit": [key.pk], "key_revoke": [key.pk], "model": ["alpha-7b"],
            "budget_edit": ["project", project.pk]}
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_user(acme, "admin"))
    for pattern in portal_urls.urlpatterns:
        url = reverse(f"portal:{pattern.name}", args=args.get(pattern.name, []))
        assert client.post(url, {"name": "changed"}).status_code == 403, url
    key.refresh_from_db()
    policy.refresh_from_db()
    assert key.revoked_at is None and key.name != "changed" and policy.versions.count() == 1
    assert client.get("/portal/logs/").status_code == 200  # the session was never ended by the logout URL
