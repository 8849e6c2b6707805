"""The served app keeps the garbage collector off start-up's objects (see inferbase.asgi._gc_tune)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROBE = ("import gc, json, inferbase.asgi; "
         "print(json.dumps({'threshold': gc.get_threshold(), 'frozen': gc.get_freeze_count()}))")


def _probe(**env: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, env={**os.environ, **env}, capture_output=True,
                         text=True, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_start_up_objects_are_frozen_and_young_collections_are_rarer(tmp_path: Path) -> None:
    tuned = _probe(INFERBASE_CACHE_DIR=str(tmp_path))
    assert tuned["frozen"] > 10_000
    assert tuned["threshold"][0] == 5000


def test_the_tuning_can_be_switched_off(tmp_path: Path) -> None:
    untuned = _probe(INFERBASE_CACHE_DIR=str(tmp_path), INFERBASE_GC_TUNING="false")
    plain = subprocess.run([sys.executable, "-c", "import gc; print(gc.get_threshold()[0])"], capture_output=True,
                           text=True, check=True)
    assert untuned["frozen"] == 0
    assert untuned["threshold"][0] == int(plain.stdout)
