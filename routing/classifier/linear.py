"""The learned linear model: weights file format, loading, and scoring of hashed features."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from routing.classifier.features import FEATURE_VERSION, N_BUCKETS, N_DENSE, Features

WEIGHTS_PATH = Path(__file__).with_name("weights.npz")
UNIT_GAINS = (1.0, 1.0, 1.0, 1.0, 1.0)


class WeightsError(Exception):
    """The weights file is missing, unreadable, or does not match this feature version."""


@dataclass(frozen=True, slots=True)
class Scores:
    """Softmax probabilities of the task head and the complexity head."""

    task: np.ndarray
    complexity: np.ndarray


@dataclass(frozen=True, slots=True)
class LinearModel:
    """Hashed-bucket weights plus dense weights for a task head and a complexity head."""

    buckets: np.ndarray
    dense: np.ndarray
    tasks: tuple[str, ...]
    complexities: tuple[str, ...]
    threshold: float
    rule_weight: float = 1.0
    # Each head's scale of the hashed groups (Features.hashed: user words, user chars, instruction span, system, ask).
    task_gains: tuple[float, ...] = UNIT_GAINS
    complexity_gains: tuple[float, ...] = UNIT_GAINS

    def scores(self, features: Features) -> Scores:
        """Return both heads' probabilities for one request's features."""
        groups = features.hashed()
        sizes = [len(indices) for indices in groups]
        logits = features.dense @ self.dense
        n_tasks = len(self.tasks)
        if sum(sizes):
            # One gather and one BLAS product: each row is scaled by its group's gain / sqrt(group size), per head.
            scale = np.array(
                [
                    np.repeat([gain * size**-0.5 if size else 0.0 for gain, size in zip(gains, sizes, strict=True)], sizes)
                    for gains in (self.task_gains, self.complexity_gains)
                ],
                dtype=np.float32,
            )
            summed = scale @ self.buckets.take(np.concatenate(groups), axis=0)
            logits = logits + np.concatenate([summed[0, :n_tasks], summed[1, n_tasks:]])
        return Scores(task=_softmax(logits[:n_tasks]), complexity=_softmax(logits[n_tasks:]))


def _softmax(logits: np.ndarray) -> np.ndarray:
    """Return the softmax of a 1-d logit vector."""
    shifted = np.exp(logits - logits.max())
    return shifted / shifted.sum()


def model_save(model: LinearModel, path: Path) -> None:
    """Write a model as a compressed .npz holding only the non-zero bucket rows, in float16."""
    used = np.flatnonzero(np.abs(model.buckets).max(axis=1) > 0).astype(np.uint32)
    np.savez_compressed(
        path,
        rows=used,
        values=model.buckets[used].astype(np.float16),
        dense=model.dense.astype(np.float32),
        tasks=np.array(model.tasks),
        complexities=np.array(model.complexities),
        threshold=np.float32(model.threshold),
        rule_weight=np.float32(model.rule_weight),
        task_gains=np.array(model.task_gains, dtype=np.float32),
        complexity_gains=np.array(model.complexity_gains, dtype=np.float32),
        meta=np.array([FEATURE_VERSION, str(N_BUCKETS), str(N_DENSE)]),
    )


def model_load(path: Path) -> LinearModel:
    """Read a model written by model_save; raise WeightsError if it is missing or incompatible."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = [str(value) for value in data["meta"]]
            tasks = tuple(str(value) for value in data["tasks"])
            complexities = tuple(str(value) for value in data["complexities"])
            if meta != [FEATURE_VERSION, str(N_BUCKETS), str(N_DENSE)]:
                raise WeightsError(f"weights at {path} were built for features {meta}")
            buckets = np.zeros((N_BUCKETS, len(tasks) + len(complexities)), dtype=np.float32)
            buckets[data["rows"]] = data["values"].astype(np.float32)
            return LinearModel(
                buckets=buckets,
                dense=data["dense"].astype(np.float32),
                tasks=tasks,
                complexities=complexities,
                threshold=float(data["threshold"]),
                rule_weight=float(data["rule_weight"]),
                task_gains=_gains(data, "task_gains"),
                complexity_gains=_gains(data, "complexity_gains"),
            )
    except WeightsError:
        raise
    except (OSError, KeyError, ValueError, IndexError) as exc:
        raise WeightsError(f"cannot load classifier weights from {path}: {exc}") from exc


def _gains(data: np.lib.npyio.NpzFile, key: str) -> tuple[float, ...]:
    """Return a head's group gains from a weights file; files written before gains existed mean unit gains."""
    if key not in data.files:
        return UNIT_GAINS
    gains = tuple(float(gain) for gain in data[key])
    if len(gains) != len(UNIT_GAINS):
        raise WeightsError(f"{key} holds {len(gains)} gains for {len(UNIT_GAINS)} feature groups")
    return gains
