"""The embedded scheduler: runs the beat schedule's tasks in this process, for the embedded default.

With no broker and no beat (`make run`), a daemon thread runs each task of `CELERY_BEAT_SCHEDULE` in
the gateway process when it falls due, the task's own code called directly (no worker, no queue). With
REDIS_URL, `celery -A inferbase beat` and workers do this instead and INFERBASE_SCHEDULER is off.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.conf import settings
from django.db import close_old_connections

logger = logging.getLogger("inferbase.scheduler")

_started: threading.Thread | None = None
_declined = False  # INFERBASE_SCHEDULER is off: checked once
_lock = threading.Lock()


def due_tasks(schedule: dict[str, dict[str, Any]], last_run: dict[str, float], now: float) -> list[str]:
    """Return the names of the schedule's entries due at `now` (never run, or their interval passed)."""
    due = []
    for name, entry in schedule.items():
        interval = float(entry["schedule"])
        if now - last_run.get(name, float("-inf")) >= interval:
            due.append(name)
    return due


def run_task(dotted: str) -> Any:
    """Run a registered Celery task here and now, by name; close the thread's database connection after."""
    from inferbase.celery import app

    app.loader.import_default_modules()  # the apps' tasks modules (autodiscovery), imported once
    try:
        return app.tasks[dotted].apply().get(propagate=True)
    finally:
        close_old_connections()


def _loop(schedule: dict[str, dict[str, Any]], tick: float) -> None:
    last_run: dict[str, float] = {}
    while True:
        now = time.monotonic()
        for name in due_tasks(schedule, last_run, now):
            last_run[name] = now
            try:
                run_task(schedule[name]["task"])
            except Exception:  # one failing task must not stop the others, nor the next run
                logger.exception("scheduled task %s failed", name)
        time.sleep(tick)


def scheduler_ensure() -> None:
    """Start the scheduler when the server starts (not at import, so importing the app starts nothing)."""
    if _started is None and not _declined:
        scheduler_start()


def scheduler_start(tick: float = 1.0) -> bool:
    """Start the scheduler thread once per process when INFERBASE_SCHEDULER is on; return whether it runs."""
    global _started, _declined
    if not settings.INFERBASE_SCHEDULER:
        _declined = True
        return False
    with _lock:
        if _started is None:
            import inferbase.celery  # noqa: F401  (registers the tasks)

            _started = threading.Thread(target=_loop, args=(dict(settings.CELERY_BEAT_SCHEDULE), tick),
                                        name="inferbase-scheduler", daemon=True)
            _started.start()
    return True
