"""`make bench-portal` (bench/portal.py) seeds Logs by COPY, which fills no column from Django's defaults."""

from __future__ import annotations

from django.db import models

from bench.portal import DECISION_COLUMNS, LOG_COLUMNS
from observability.models import RequestLog, RoutingDecision


def _required(model: type[models.Model]) -> set[str]:
    return {f.column for f in model._meta.concrete_fields
            if not f.null and not f.primary_key and f.db_default is models.NOT_PROVIDED}


def test_the_portal_bench_seeds_every_column_a_log_row_requires() -> None:
    # A column added to RequestLog without a database default breaks the seeding (NOT NULL) until listed here.
    assert _required(RequestLog) <= set(LOG_COLUMNS), _required(RequestLog) - set(LOG_COLUMNS)


def test_the_portal_bench_seeds_every_column_a_decision_row_requires() -> None:
    assert _required(RoutingDecision) <= set(DECISION_COLUMNS), _required(RoutingDecision) - set(DECISION_COLUMNS)
