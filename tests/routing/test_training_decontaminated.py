"""No training prompt may be a near-duplicate of a held-out prompt, and training never reads a held-out set.

Similarity is difflib's SequenceMatcher ratio (default settings) on lower-cased, whitespace-collapsed text.
Only this test reads the held-out sets; make_data and train must not.
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path

import numpy as np

from routing.classifier import make_data

DATA = Path(make_data.__file__).with_name("data")
HELDOUT_PATHS = (DATA / "heldout.jsonl", DATA / "heldout_v2.jsonl")
THRESHOLD = 0.8
_BAG = 512  # character-bag buckets for the vectorised upper bound
# Past this length, pairs whose character-trigram sets overlap (Dice) under _TRIGRAM_FLOOR are skipped. Not a
# bound but a wide margin: measured on these sets, every pair of 100+ characters at ratio >= 0.7 had a
# trigram Dice above 0.6. Shorter prompts (where trigram overlap says little) always get the full ratio.
_TRIGRAM_FROM = 100
_TRIGRAM_FLOOR = 0.4


def _normalise(text: str) -> str:
    return " ".join(text.lower().split())


def _read(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _bags(texts: list[str]) -> np.ndarray:
    """Character counts hashed into _BAG buckets; merging buckets only raises sum(min), so it stays an upper bound."""
    bags = np.zeros((len(texts), _BAG), dtype=np.int32)
    for row, text in enumerate(texts):
        points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32) % _BAG
        bags[row] = np.bincount(points, minlength=_BAG)
    return bags


def _trigrams(text: str) -> set[str]:
    return {text[i : i + 3] for i in range(max(1, len(text) - 2))}


def near_duplicates(training: list[str], heldout: list[str], threshold: float = THRESHOLD) -> list[tuple[int, int, float]]:
    """Return (training index, held-out index, ratio) for every pair at or above threshold.

    ratio = 2M / (len a + len b) and M <= min(len a, len b) and M <= sum of min character counts, so
    pairs are pruned by length, then by a vectorised character-bag bound, then (long texts) by trigram
    overlap, then by real_quick_ratio and quick_ratio.
    """
    train_norm = [_normalise(text) for text in training]
    held_norm = [_normalise(text) for text in heldout]
    train_len = np.array([len(text) for text in train_norm])
    train_bags = _bags(train_norm)
    train_grams: dict[int, set[str]] = {}
    found = []
    for h_index, held in enumerate(held_norm):
        size = len(held)
        if size == 0:
            continue
        # 2*min/(a+b) >= t  <=>  the shorter is at least t/(2-t) of the longer.
        low, high = size * threshold / (2 - threshold), size * (2 - threshold) / threshold
        candidates = np.flatnonzero((train_len >= low) & (train_len <= high))
        if len(candidates) == 0:
            continue
        held_bag = _bags([held])[0]
        bound = 2 * np.minimum(train_bags[candidates], held_bag).sum(axis=1) / (train_len[candidates] + size)
        held_grams = _trigrams(held)
        for t_index in candidates[bound >= threshold]:
            if size >= _TRIGRAM_FROM:
                grams = train_grams.get(t_index) or train_grams.setdefault(t_index, _trigrams(train_norm[t_index]))
                if 2 * len(held_grams & grams) < _TRIGRAM_FLOOR * (len(held_grams) + len(grams)):
                    continue
            matcher = difflib.SequenceMatcher(None, held, train_norm[t_index])
            if matcher.real_quick_ratio() < threshold or matcher.quick_ratio() < threshold:
                continue
            ratio = matcher.ratio()
            if ratio >= threshold:
                found.append((int(t_index), h_index, ratio))
    return found


def test_near_duplicates_finds_an_edited_copy_and_ignores_unrelated_text():
    held = ["Translate this into French: the meeting moved to Thursday at 10.", "Write a haiku about rain."]
    training = [
        "translate this into french:  the meeting moved to Thursday at 11!",
        "What is the capital of Peru?",
        "Write a haiku about snow and silence at dawn.",
    ]
    pairs = near_duplicates(training, held)
    assert [(t, h) for t, h, _ in pairs] == [(0, 0)]
    assert pairs[0][2] >= THRESHOLD


def test_training_prompts_are_not_near_duplicates_of_heldout():
    training = _read(make_data.OUT_PATH)
    heldout = [record["user"] for path in HELDOUT_PATHS for record in _read(path)]
    pairs = near_duplicates([record["user"] for record in training], heldout)
    # Name only the training side; the held-out prompts are not to be looked at.
    origins = sorted({training[t].get("origin", f"train.jsonl row {t}") for t, _, _ in pairs})
    assert not origins, f"training prompts within {THRESHOLD} similarity of a held-out prompt: {origins}"


def test_train_jsonl_is_what_make_data_builds():
    # The near-duplicate check reads train.jsonl, so it must be current with the hand-written files.
    built = [json.dumps(record, ensure_ascii=False) for record in make_data.generate()]
    assert make_data.OUT_PATH.read_text(encoding="utf-8").splitlines() == built


def test_training_code_never_reads_a_heldout_set():
    package = Path(make_data.__file__).parent
    for name in ("make_data.py", "train.py", "features.py", "linear.py", "heuristic.py", "core.py"):
        source = (package / name).read_text(encoding="utf-8")
        assert not re.search(r"heldout|held_out", source, re.IGNORECASE), name
