"""The embedded scheduler: which beat entries are due, and that a due task runs here (no broker)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from inferbase.scheduler import due_tasks, run_task
from routing.models import RouteEvidence, RouteSample

SCHEDULE = {"a": {"task": "x", "schedule": 30.0}, "b": {"task": "y", "schedule": 5.0}}


def test_every_entry_is_due_at_the_start() -> None:
    assert due_tasks(SCHEDULE, {}, 100.0) == ["a", "b"]


def test_an_entry_is_due_again_after_its_interval() -> None:
    assert due_tasks(SCHEDULE, {"a": 100.0, "b": 100.0}, 104.9) == []
    assert due_tasks(SCHEDULE, {"a": 100.0, "b": 100.0}, 105.0) == ["b"]
    assert due_tasks(SCHEDULE, {"a": 100.0, "b": 105.0}, 130.0) == ["a", "b"]


def test_every_scheduled_task_is_registered() -> None:
    from django.conf import settings

    from inferbase.celery import app

    app.loader.import_default_modules()
    assert {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()} <= set(app.tasks)


@pytest.mark.django_db(transaction=True)
def test_a_due_task_runs_in_process() -> None:
    RouteSample.objects.create(route_id="groq/a", created_at=timezone.now(), outcome="served", end_to_end_ms=10)
    result = run_task("routing.tasks.route_evidence_refresh")
    assert result["routes"] == 1 and RouteEvidence.objects.get(route_id="groq/a").failure_samples == 1
