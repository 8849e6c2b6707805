"""The served app keeps the garbage collector off start-up's objects (see inferbase.asgi._gc_tune)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# Import the served app, then allocate as requests do (containers that live a while): report how many objects
# the collector no longer sees, and how many young collections the allocations set off.
PROBE = ("import gc, json, inferbase.asgi\n"
         "before = gc.get_stats()[0]['collections']\n"
         "kept = [[i] for i in range(200_000)]\n"
         "print(json.dumps({'frozen': gc.get_freeze_count(),"
         " 'young_collections': gc.get_stats()[0]['collections'] - before}))")


def _probe(**env: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, env={**os.environ, **env}, capture_output=True,
                         text=True, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def untuned(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return _probe(INFERBASE_CACHE_DIR=str(tmp_path_factory.mktemp("gc")), INFERBASE_GC_TUNING="false")


def test_start_up_objects_are_frozen_and_young_collections_are_rarer(tmp_path: Path, untuned: dict) -> None:
    tuned = _probe(INFERBASE_CACHE_DIR=str(tmp_path))
    assert tuned["frozen"] > 10_000
    assert 0 < tuned["young_collections"] < untuned["young_collections"] / 4


def test_the_tuning_can_be_switched_off(untuned: dict) -> None:
    plain = subprocess.run([sys.executable, "-c", PROBE.replace("inferbase.asgi", "django")], cwd=REPO,
                           capture_output=True, text=True, check=True, timeout=120)
    assert untuned["frozen"] == 0
    # As many young collections as a process that never heard of the tuning.
    expected = json.loads(plain.stdout.strip().splitlines()[-1])["young_collections"]
    assert abs(untuned["young_collections"] - expected) <= expected // 10
