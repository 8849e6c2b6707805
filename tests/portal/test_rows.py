"""Rows of Logs are built the same from a selector's values and from a fresh log record (the live tail's)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.template.loader import render_to_string

from inferbase.portal.rows import Names, dollars, log_row

NAMES = Names(projects={1: "web"}, keys={7: "frontend (inf_abc…)"}, models={"alpha-7b": "Alpha 7B"})


@pytest.mark.parametrize(("micros", "shown"), [
    (0, "$0.000000"), (13, "$0.000013"), (1_234_567, "$1.234567"), (12_345_678_901, "$12,345.678901"),
    (-250, "-$0.000250"),
])
def test_dollars_are_exact_to_the_micro_dollar(micros: int, shown: str) -> None:
    assert dollars(micros) == shown


def test_a_fresh_record_renders_as_a_row_with_names() -> None:
    record = {"request_id": "req-0123456789abcdef", "created_at": 1764523960.5, "project_id": 1, "api_key_id": 7,
              "model_requested": "inferbase/auto", "model_served": "alpha-7b", "final_disposition": "served",
              "status_code": 200, "stream": True, "prompt_tokens": 10, "completion_tokens": 20,
              "reasoning_tokens": 5, "cost_micros": 42, "latency_ms": 300, "ttft_ms": 90, "task": "coding"}
    row = log_row(record, NAMES)
    assert row.created_at == datetime.fromtimestamp(1764523960.5, tz=UTC)
    assert (row.project, row.key, row.model_requested, row.model_served) == ("web", "frontend (inf_abc…)", "auto",
                                                                              "Alpha 7B")
    assert row.url == "/portal/logs/req-0123456789abcdef/"
    html = render_to_string("portal/_partials/log_row.html", {"row": row})
    assert 'data-request-id="req-0123456789abcdef"' in html and "Alpha 7B" in html and "$0.000042" in html


def test_an_id_the_catalog_no_longer_has_is_shown_as_the_id() -> None:
    row = log_row({"request_id": "req-1", "created_at": datetime.now(UTC), "model_served": "retired-model"}, NAMES)
    assert row.model_served == "retired-model" and row.project == "" and row.key == ""
