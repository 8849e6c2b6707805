"""daphne with a profiler its parent switches on and off: SIGUSR1 starts cProfile on the main thread (the
reactor and the event loop), SIGUSR2 stops it and writes the stats to the file named by argv[1]; the rest of
argv is daphne's. Used by bench.profile_gateway, so that start-up stays out of the profile."""

from __future__ import annotations

import cProfile
import signal
import sys

from daphne.cli import CommandLineInterface

OUT = sys.argv.pop(1)
profile = cProfile.Profile()


def _start(signum: int, frame: object) -> None:
    profile.enable()


def _stop(signum: int, frame: object) -> None:
    profile.disable()
    profile.dump_stats(OUT)


signal.signal(signal.SIGUSR1, _start)
signal.signal(signal.SIGUSR2, _stop)
CommandLineInterface.entrypoint()
