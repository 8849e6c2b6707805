"""Observability › Logs: the list, its filters, keyset pages; names everywhere, never ids alone."""

from __future__ import annotations

import re
from datetime import UTC

import pytest
from django.test import Client

from inferbase.accounts.models import Organization

from .conftest import at, make_api_key, make_project, make_request_log

pytestmark = pytest.mark.django_db


def _ids(response) -> list[str]:  # type: ignore[no-untyped-def]
    return re.findall(r'data-request-id="(req-[0-9a-f]+)"', response.content.decode())


@pytest.fixture
def key(acme: Organization, models: None):  # type: ignore[no-untyped-def]
    return make_api_key(make_project(acme, name="web"), name="frontend")


def test_logs_list_shows_the_newest_first_with_names(analyst: Client, key) -> None:  # type: ignore[no-untyped-def]
    older = make_request_log(key, created_at=at(10), cost_micros=1_234_567, reasoning_tokens=77, ttft_ms=88)
    newer = make_request_log(key, created_at=at(1), stream=True, model_served="beta-70b")
    response = analyst.get("/portal/logs/")
    assert response.status_code == 200
    assert _ids(response) == [newer.request_id, older.request_id]
    body = response.content.decode()
    assert "Observability › <strong>Logs</strong>" in body
    assert "Beta 70B" in body and "Alpha 7B" in body  # model names, not ids alone
    assert "web" in body and "frontend (inf_" in body  # project and key names
    assert "$1.234567" in body and 'title="1234567 micro-dollars"' in body
    assert "77 reasoning" in body and "ttft 88 ms" in body


def test_a_logs_row_shows_every_column_the_issue_names(analyst: Client, key) -> None:  # type: ignore[no-untyped-def]
    log = make_request_log(key, model_requested="beta-70b", model_served="alpha-7b", task="maths", complexity="hard",
                           thinking="on", status_code=200, final_disposition="served", stream=True,
                           prompt_tokens=1200, completion_tokens=340, reasoning_tokens=90, cached_tokens=800,
                           cost_micros=4321, latency_ms=1500, ttft_ms=320)
    body = analyst.get("/portal/logs/").content.decode()
    row = re.search(rf'<tr[^>]*data-request-id="{log.request_id}">(.*?)</tr>', body, re.S)
    assert row is not None
    cells = [" ".join(re.sub(r"<[^>]+>", " ", cell).split()) for cell in re.findall(r"<td[^>]*>(.*?)</td>",
                                                                                    row.group(1), re.S)]
    assert cells == [
        log.created_at.astimezone(UTC).strftime("%b %-d, %H:%M:%S"),  # time
        log.request_id,
        f"web frontend ({key.prefix}…)",  # project, key
        "Alpha 7B asked Beta 70B",  # model served, model requested: names
        "maths hard · thinking on",  # task, complexity, thinking
        "served 200",  # disposition, status
        "yes",  # streamed
        "1200 → 340 90 reasoning · 800 cached",  # tokens, reasoning and cached too
        "$0.004321 4321 µ$",  # cost_micros
        "1500 ms ttft 320 ms",  # latency, ttft
    ]


def test_logs_list_is_empty_with_a_hint(analyst: Client) -> None:
    response = analyst.get("/portal/logs/")
    assert b"No request yet." in response.content


@pytest.mark.parametrize(("query", "matching"), [
    ("task=maths", {"task": "maths"}),
    ("complexity=hard", {"complexity": "hard"}),
    ("disposition=upstream_error", {"final_disposition": "upstream_error", "status_code": 502}),
    ("status=502", {"final_disposition": "upstream_error", "status_code": 502}),
    ("streamed=true", {"stream": True}),
    ("thinking=on", {"thinking": "on"}),
    ("model=beta-70b", {"model_served": "beta-70b"}),
])
def test_logs_filter_keeps_only_matching_rows(analyst: Client, key, query: str, matching: dict) -> None:  # type: ignore[no-untyped-def]
    make_request_log(key)
    wanted = make_request_log(key, **matching)
    response = analyst.get(f"/portal/logs/?{query}")
    assert _ids(response) == [wanted.request_id]


def test_logs_filter_by_project_and_key(analyst: Client, acme: Organization, key) -> None:  # type: ignore[no-untyped-def]
    other_key = make_api_key(make_project(acme, name="batch"), name="nightly")
    mine = make_request_log(key)
    theirs = make_request_log(other_key)
    assert _ids(analyst.get(f"/portal/logs/?project={other_key.project_id}")) == [theirs.request_id]
    assert _ids(analyst.get(f"/portal/logs/?key={key.pk}")) == [mine.request_id]


def test_logs_filter_by_time_range(analyst: Client, key) -> None:  # type: ignore[no-untyped-def]
    make_request_log(key, created_at=at(180))
    inside = make_request_log(key, created_at=at(60))
    make_request_log(key, created_at=at(5))
    since = at(120).strftime("%Y-%m-%dT%H:%M")
    until = at(30).strftime("%Y-%m-%dT%H:%M")
    assert _ids(analyst.get(f"/portal/logs/?since={since}&until={until}")) == [inside.request_id]


def test_logs_search_by_request_id_or_its_beginning(analyst: Client, key) -> None:  # type: ignore[no-untyped-def]
    wanted = make_request_log(key, request_id="req-abcdef0123456789")
    make_request_log(key, request_id="req-0000000000000001")
    assert _ids(analyst.get("/portal/logs/?q=req-abcdef0123456789")) == [wanted.request_id]
    assert _ids(analyst.get("/portal/logs/?q=ABCDEF")) == [wanted.request_id]


def test_an_invalid_filter_shows_its_error_and_no_rows(analyst: Client, key) -> None:  # type: ignore[no-untyped-def]
    make_request_log(key)
    response = analyst.get("/portal/logs/?task=juggling&status=abc")
    assert _ids(response) == []
    body = response.content.decode()
    assert "Select a valid choice. juggling is not one of the available choices." in body
    assert "Enter a whole number." in body


def test_filters_are_kept_in_the_export_link_and_the_form(analyst: Client, key) -> None:  # type: ignore[no-untyped-def]
    response = analyst.get("/portal/logs/?task=coding&streamed=false")
    body = response.content.decode()
    assert 'href="/portal/logs.csv?task=coding&amp;streamed=false"' in body
    assert '<option value="coding" selected>coding</option>' in body


def test_keyset_pages_walk_every_row_once(analyst: Client, key, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr("inferbase.portal.logs.PAGE_SIZE", 3)
    same_instant = at(30)
    logs = [make_request_log(key, created_at=same_instant) for _ in range(4)]  # ties broken by id
    logs += [make_request_log(key, created_at=at(40 + n)) for n in range(3)]
    expected = [log.request_id for log in sorted(logs, key=lambda log: (log.created_at, log.pk), reverse=True)]
    seen: list[str] = []
    url = "/portal/logs/?task=coding"
    while url:
        response = analyst.get(url)
        seen += _ids(response)
        match = re.search(r'href="([^"]+)" rel="next"', response.content.decode())
        url = match.group(1).replace("&amp;", "&") if match else ""
        assert not url or "task=coding" in url
    assert seen == expected


def test_a_malformed_page_cursor_shows_the_first_page(analyst: Client, key) -> None:  # type: ignore[no-untyped-def]
    log = make_request_log(key)
    assert _ids(analyst.get("/portal/logs/?after=not-a-cursor")) == [log.request_id]


def test_logs_list_answers_only_get_and_head(analyst: Client) -> None:
    assert analyst.post("/portal/logs/").status_code == 405
