"""The second held-out set is frozen: its bytes are pinned, so any later edit shows."""

from __future__ import annotations

import hashlib
from pathlib import Path

HELDOUT_V2 = Path(__file__).resolve().parents[2] / "routing" / "classifier" / "data" / "heldout_v2.jsonl"
# Also written in docs/classifier.md ("The held-out set"); change neither.
HELDOUT_V2_SHA256 = "6a99b9e7dfbdd8f345843682620c25c0fc161d1f38d0c17db16bbdfa63142623"


def test_heldout_v2_is_unchanged() -> None:
    assert hashlib.sha256(HELDOUT_V2.read_bytes()).hexdigest() == HELDOUT_V2_SHA256
