"""Isolation: another organization's ids are a 404 on every page, and its data appears in no list, filter,
search or export. Analysts and admins both read Logs; admin-only pages refuse analysts."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.test import Client, RequestFactory

from inferbase.accounts.models import Organization
from inferbase.portal import urls as portal_urls
from inferbase.portal.access import portal_view

from .conftest import make_api_key, make_project, make_request_log, make_routing_decision, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def acme_log(acme: Organization, models: None):  # type: ignore[no-untyped-def]
    log = make_request_log(make_api_key(make_project(acme, name="acme-web"), name="acme-frontend"))
    make_routing_decision(log)
    return log


@pytest.fixture
def globex_log(globex: Organization, models: None):  # type: ignore[no-untyped-def]
    log = make_request_log(make_api_key(make_project(globex, name="globex-web"), name="globex-backend"))
    make_routing_decision(log)
    return log


def _ids(response) -> list[str]:  # type: ignore[no-untyped-def]
    return re.findall(r'data-request-id="(req-[0-9a-f]+)"', response.content.decode())


def _csv_ids(response) -> list[str]:  # type: ignore[no-untyped-def]
    content = b"".join(response.streaming_content).decode()
    return [row["request_id"] for row in csv.DictReader(io.StringIO(content))]


@pytest.mark.parametrize("viewer", ["admin", "analyst"])
def test_members_of_both_roles_read_their_organizations_logs(request, viewer: str, acme_log, globex_log) -> None:  # type: ignore[no-untyped-def]
    client: Client = request.getfixturevalue(viewer)
    assert _ids(client.get("/portal/logs/")) == [acme_log.request_id]
    assert client.get(f"/portal/logs/{acme_log.request_id}/").status_code == 200
    assert _csv_ids(client.get("/portal/logs.csv")) == [acme_log.request_id]


def test_outsider_list_holds_only_its_own_rows_and_names(outsider: Client, acme_log, globex_log) -> None:  # type: ignore[no-untyped-def]
    response = outsider.get("/portal/logs/")
    assert _ids(response) == [globex_log.request_id]
    body = response.content.decode()
    assert "acme-web" not in body and "acme-frontend" not in body  # not even as filter choices
    assert "Acme" not in body


def test_another_organizations_request_id_is_the_same_404_as_a_missing_one(outsider: Client, acme_log) -> None:  # type: ignore[no-untyped-def]
    theirs = outsider.get(f"/portal/logs/{acme_log.request_id}/")
    missing = outsider.get("/portal/logs/req-ffffffffffffffff/")
    assert theirs.status_code == missing.status_code == 404
    assert acme_log.request_id.encode() in theirs.content and b"acme" not in theirs.content.lower()


def test_outsider_search_for_another_organizations_request_finds_nothing(outsider: Client, acme_log, globex_log) -> None:  # type: ignore[no-untyped-def]
    assert _ids(outsider.get(f"/portal/logs/?q={acme_log.request_id}")) == []
    assert _ids(outsider.get("/portal/logs/?q=req-")) == [globex_log.request_id]
    assert _csv_ids(outsider.get(f"/portal/logs.csv?q={acme_log.request_id}")) == []


def test_another_organizations_project_or_key_is_not_a_valid_filter(outsider: Client, acme_log, globex_log) -> None:  # type: ignore[no-untyped-def]
    for query in (f"project={acme_log.project_id}", f"key={acme_log.api_key_id}"):
        response = outsider.get(f"/portal/logs/?{query}")
        assert _ids(response) == [] and b"Select a valid choice." in response.content
        assert outsider.get(f"/portal/logs.csv?{query}").status_code == 400


def test_outsider_export_holds_only_its_own_rows(outsider: Client, acme_log, globex_log) -> None:  # type: ignore[no-untyped-def]
    response = outsider.get("/portal/logs.csv")
    assert _csv_ids(response) == [globex_log.request_id]


def test_a_filter_on_a_shared_value_stays_within_the_organization(outsider: Client, acme_log, globex_log) -> None:  # type: ignore[no-untyped-def]
    for query in ("model=alpha-7b", "task=coding", "status=200", "disposition=served", "streamed=false"):
        assert _ids(outsider.get(f"/portal/logs/?{query}")) == [globex_log.request_id], query


def test_logs_of_requests_no_key_vouched_for_are_nobodys(outsider: Client, globex_log) -> None:  # type: ignore[no-untyped-def]
    anonymous = make_request_log(None, status_code=401, final_disposition="rejected")  # organization_id NULL
    assert anonymous.request_id not in _ids(outsider.get("/portal/logs/"))
    assert outsider.get(f"/portal/logs/{anonymous.request_id}/").status_code == 404


def test_every_portal_url_but_login_and_logout_goes_through_portal_view() -> None:
    open_views = {"login", "logout"}
    for pattern in portal_urls.urlpatterns:
        if pattern.name in open_views:
            continue
        assert hasattr(pattern.callback, "portal_admin_only"), f"{pattern.name} is not wrapped in portal_view"


def test_every_portal_page_sends_the_anonymous_to_login(acme_log) -> None:  # type: ignore[no-untyped-def]
    client = Client()
    for path in ("/portal/", "/portal/logs/", "/portal/logs.csv", f"/portal/logs/{acme_log.request_id}/",
                 "/portal/password/", "/portal/password/done/"):
        response = client.get(path)
        assert response.status_code == 302 and response["Location"].startswith("/portal/login/?next="), path


def test_admin_only_pages_refuse_analysts_and_serve_admins(acme: Organization) -> None:
    @portal_view(admin_only=True)
    def settings_page(request):  # type: ignore[no-untyped-def]
        return HttpResponse("admin things")

    factory = RequestFactory()

    def as_user(user: User) -> HttpResponse:
        request = factory.get("/portal/somewhere/")
        request.user = user
        return settings_page(request)

    refused = as_user(make_user(acme, "analyst"))
    assert refused.status_code == 403 and b"This page is for your organization" in refused.content
    assert as_user(make_user(acme, "admin")).content == b"admin things"


def test_logs_list_makes_the_same_few_queries_whatever_the_rows(analyst: Client, acme: Organization, models: None,
                                                                 django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    key = make_api_key(make_project(acme))
    for _ in range(30):
        make_request_log(key)
    # session, user, membership, projects, keys, models, the page of logs
    with django_assert_num_queries(7):
        assert analyst.get("/portal/logs/?task=coding").status_code == 200


def test_log_detail_makes_a_fixed_number_of_queries(analyst: Client, acme_log, django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    # session, user, membership, the log, its decision, projects, keys, models
    with django_assert_num_queries(8):
        assert analyst.get(f"/portal/logs/{acme_log.request_id}/").status_code == 200
