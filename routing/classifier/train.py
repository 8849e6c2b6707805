"""Train the linear classifier on data/train.jsonl and write weights.npz; deterministic.

Run: python -m routing.classifier.train
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from routing.classifier.features import N_BUCKETS, features_of, window_of
from routing.classifier.linear import WEIGHTS_PATH, LinearModel, model_save
from routing.tasks import COMPLEXITIES, TASKS

TRAIN_PATH = Path(__file__).with_name("data") / "train.jsonl"
LEARNED_TASKS = tuple(task for task in TASKS if task != "tool_use")
SEED = 13
EPOCHS = 300
LEARNING_RATE = 0.05
L2 = 1e-4
THRESHOLD = 0.4


@dataclass(frozen=True, slots=True)
class Dataset:
    """Training examples as a compact sparse matrix (rows sorted) plus dense features and labels."""

    rows: np.ndarray
    cols: np.ndarray
    vals: np.ndarray
    buckets: np.ndarray
    dense: np.ndarray
    task: np.ndarray
    complexity: np.ndarray


def records_load(path: Path) -> list[dict]:
    """Read a JSONL file of labelled requests."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def dataset_build(records: list[dict]) -> Dataset:
    """Hash every record and compact the used buckets into consecutive columns."""
    rows, cols, vals, dense = [], [], [], []
    for row, record in enumerate(records):
        features = features_of(window_of(system=record.get("system", ""), user=record["user"]))
        for indices in (features.user_words, features.user_chars, features.system):
            if len(indices):
                rows.append(np.full(len(indices), row))
                cols.append(indices)
                vals.append(np.full(len(indices), len(indices) ** -0.5, dtype=np.float32))
        dense.append(features.dense)
    buckets, compact = np.unique(np.concatenate(cols), return_inverse=True)
    task = np.array([LEARNED_TASKS.index(r["task"]) if r["task"] in LEARNED_TASKS else -1 for r in records])
    return Dataset(
        rows=np.concatenate(rows),
        cols=compact,
        vals=np.concatenate(vals),
        buckets=buckets,
        dense=np.stack(dense),
        task=task,
        complexity=np.array([COMPLEXITIES.index(r["complexity"]) for r in records]),
    )


def _targets(data: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """Return one-hot targets for both heads and a per-row, per-column mask (tool_use rows skip the task head)."""
    n, n_tasks = len(data.task), len(LEARNED_TASKS)
    target = np.zeros((n, n_tasks + len(COMPLEXITIES)), dtype=np.float32)
    mask = np.ones_like(target)
    has_task = data.task >= 0
    target[np.flatnonzero(has_task), data.task[has_task]] = 1.0
    mask[~has_task, :n_tasks] = 0.0
    target[np.arange(n), n_tasks + data.complexity] = 1.0
    return target, mask


def _head_softmax(logits: np.ndarray, n_tasks: int) -> np.ndarray:
    """Apply a softmax to each head's block of logits."""
    probs = np.empty_like(logits)
    for block in (slice(0, n_tasks), slice(n_tasks, None)):
        shifted = np.exp(logits[:, block] - logits[:, block].max(axis=1, keepdims=True))
        probs[:, block] = shifted / shifted.sum(axis=1, keepdims=True)
    return probs


def fit(data: Dataset, *, epochs: int = EPOCHS, seed: int = SEED) -> tuple[np.ndarray, np.ndarray]:
    """Fit both softmax heads by full-batch Adam on cross-entropy with L2; return sparse and dense weights."""
    rng = np.random.default_rng(seed)
    n_tasks = len(LEARNED_TASKS)
    width = n_tasks + len(COMPLEXITIES)
    target, mask = _targets(data)
    sparse = (rng.standard_normal((len(data.buckets), width)) * 1e-3).astype(np.float32)
    dense = np.zeros((data.dense.shape[1], width), dtype=np.float32)
    params = [sparse, dense]
    moments = [(np.zeros_like(p), np.zeros_like(p)) for p in params]
    starts = np.flatnonzero(np.diff(data.rows, prepend=-1))
    n = len(data.task)
    for step in range(1, epochs + 1):
        logits = np.add.reduceat(sparse[data.cols] * data.vals[:, None], starts) + data.dense @ dense
        error = (_head_softmax(logits, n_tasks) - target) * mask / n
        contrib = error[data.rows] * data.vals[:, None]
        grad_sparse = np.stack(
            [np.bincount(data.cols, weights=contrib[:, k], minlength=len(data.buckets)) for k in range(width)], axis=1
        ).astype(np.float32)
        grads = [grad_sparse + L2 * sparse, data.dense.T @ error + L2 * dense]
        for param, grad, (m, v) in zip(params, grads, moments, strict=True):
            m *= 0.9
            m += 0.1 * grad
            v *= 0.999
            v += 0.001 * grad * grad
            param -= LEARNING_RATE * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return sparse, dense


def model_train(records: list[dict], *, epochs: int = EPOCHS) -> LinearModel:
    """Train a LinearModel on labelled records."""
    data = dataset_build(records)
    sparse, dense = fit(data, epochs=epochs)
    buckets = np.zeros((N_BUCKETS, sparse.shape[1]), dtype=np.float32)
    buckets[data.buckets] = sparse
    return LinearModel(buckets=buckets, dense=dense, tasks=LEARNED_TASKS, complexities=COMPLEXITIES, threshold=THRESHOLD)


def main() -> None:
    """Train from train.jsonl and write the weights file."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=TRAIN_PATH)
    parser.add_argument("--out", type=Path, default=WEIGHTS_PATH)
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    args = parser.parse_args()
    records = records_load(args.data)
    model = model_train(records, epochs=args.epochs)
    model_save(model, args.out)
    print(f"trained on {len(records)} records; wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
