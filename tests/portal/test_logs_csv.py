"""/portal/logs.csv: the filtered list as CSV, streamed (never built in memory), under WSGI and ASGI."""

from __future__ import annotations

import csv
import io

import pytest
from django.test import AsyncRequestFactory, Client

from inferbase.accounts.models import Organization
from inferbase.portal import export

from .conftest import at, make_api_key, make_project, make_request_log

pytestmark = pytest.mark.django_db


def _rows(content: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(content.decode())))


@pytest.fixture
def key(acme: Organization, models: None):  # type: ignore[no-untyped-def]
    return make_api_key(make_project(acme, name="web"), name="=cmd|' /C calc'!A0")


def test_export_streams_the_filtered_rows_newest_first(analyst: Client, key) -> None:  # type: ignore[no-untyped-def]
    make_request_log(key, task="writing")
    old = make_request_log(key, created_at=at(20), cost_micros=2_500_000, reasoning_tokens=5)
    new = make_request_log(key, created_at=at(2), model_served="beta-70b")
    response = analyst.get("/portal/logs.csv?task=coding")
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="inferbase-logs-acme-')
    rows = _rows(b"".join(response.streaming_content))
    assert [r["request_id"] for r in rows] == [new.request_id, old.request_id]
    assert rows[0]["model_served_name"] == "Beta 70B" and rows[0]["project"] == "web"
    assert rows[1]["cost_micros"] == "2500000" and rows[1]["cost_usd"] == "2.500000"
    assert rows[1]["reasoning_tokens"] == "5"


def test_export_defuses_cells_that_a_spreadsheet_would_run(analyst: Client, key) -> None:  # type: ignore[no-untyped-def]
    make_request_log(key)
    rows = _rows(b"".join(analyst.get("/portal/logs.csv").streaming_content))
    assert rows[0]["key"].startswith("'=cmd")


def test_export_sends_rows_in_chunks(analyst: Client, key, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(export, "ROWS_PER_CHUNK", 2)
    for _ in range(5):
        make_request_log(key)
    chunks = list(analyst.get("/portal/logs.csv").streaming_content)
    assert len(chunks) == 3  # 2 + 2 + 1 rows, the header with the first
    assert len(_rows(b"".join(chunks))) == 5


def test_export_with_invalid_filters_is_a_400_naming_them(analyst: Client) -> None:
    response = analyst.get("/portal/logs.csv?complexity=extreme")
    assert response.status_code == 400 and b"complexity: Select a valid choice." in response.content


def test_export_of_nothing_is_the_header_alone(analyst: Client) -> None:
    content = b"".join(analyst.get("/portal/logs.csv").streaming_content).decode()
    assert content.strip() == ",".join(export.COLUMNS)


async def test_export_under_asgi_streams_an_async_iterator() -> None:
    # Under ASGI Django reads a sync iterator whole (with a warning, an error here) before the first byte; so the
    # chunks are handed over one at a time by an async iterator. (Daphne's own log does not show that warning;
    # tests/portal/test_live_portal.py downloads the export through daphne.)
    pulled: list[int] = []

    def chunks():  # type: ignore[no-untyped-def]
        for n in range(3):
            pulled.append(n)
            yield f"chunk {n}\n".encode()

    response = export.csv_response(AsyncRequestFactory().get("/portal/logs.csv"), chunks(), filename="x.csv")
    assert response.is_async
    stream = response.streaming_content.__aiter__()
    assert await stream.__anext__() == b"chunk 0\n" and pulled == [0]  # nothing read ahead
    assert [chunk async for chunk in stream] == [b"chunk 1\n", b"chunk 2\n"]


def test_export_reads_in_keyset_batches_with_every_row_once(acme: Organization, models: None,
                                                            django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    from inferbase.portal.rows import names_for
    from observability.filters import RequestLogFilter
    from observability.selectors import request_log_export

    key = make_api_key(make_project(acme))
    instant = at(5)
    logs = [make_request_log(key, created_at=instant) for _ in range(3)] + [make_request_log(key) for _ in range(2)]
    expected = [log.request_id for log in sorted(logs, key=lambda log: (log.created_at, log.pk), reverse=True)]
    names = names_for(organization_id=acme.pk)
    filters = RequestLogFilter({}, projects=names.projects, keys=names.keys, models=names.models)
    with django_assert_num_queries(3):  # 2 + 2 + 1 rows, one query per batch
        rows = list(request_log_export(organization_id=acme.pk, filters=filters, batch_size=2))
    assert [row["request_id"] for row in rows] == expected
