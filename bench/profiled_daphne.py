"""daphne with a profiler its parent switches on and off: SIGUSR1 starts cProfile on the main thread (the
reactor and the event loop; thread CPU time), SIGUSR2 stops it and writes the stats to the file named by argv[1]; the rest of
argv is daphne's. While it is on, every batch the log writer's thread stores (`RecordStore.__call__`) runs under a
second profiler, written beside it as `<argv[1]>.writer`, with the number of records stored in `<argv[1]>.records`.
Used by bench.profile_gateway, so that start-up stays out of the profile."""

from __future__ import annotations

import cProfile
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from daphne.cli import CommandLineInterface

OUT = sys.argv.pop(1)
# CPU time of the thread (time.thread_time) rather than wall time: a thread waiting for the GIL, a lock or the
# disk is not charged. INFERBASE_PROFILE_WALL=1 for wall time (what the first profiles used).
_timer = () if os.environ.get("INFERBASE_PROFILE_WALL") == "1" else (time.thread_time,)
profile = cProfile.Profile(*_timer)
writer_profile = cProfile.Profile(*_timer)
state = {"on": False, "records": 0}


def _start(signum: int, frame: object) -> None:
    state["on"] = True
    profile.enable()


def _stop(signum: int, frame: object) -> None:
    profile.disable()
    state["on"] = False
    profile.dump_stats(OUT)
    writer_profile.dump_stats(OUT + ".writer")
    Path(OUT + ".records").write_text(str(state["records"]))


def _profile_writer() -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inferbase.settings")
    django.setup()
    from inferbase.gateway.persist import RecordStore

    store = RecordStore.__call__

    def profiled(self: RecordStore, records: list[dict[str, Any]]) -> None:
        if not state["on"]:
            return store(self, records)
        state["records"] += len(records)
        writer_profile.enable()
        try:
            return store(self, records)
        finally:
            writer_profile.disable()

    RecordStore.__call__ = profiled  # type: ignore[method-assign]


signal.signal(signal.SIGUSR1, _start)
signal.signal(signal.SIGUSR2, _stop)
_profile_writer()
CommandLineInterface.entrypoint()
