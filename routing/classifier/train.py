"""Train the linear classifier on data/train.jsonl and write weights.npz; deterministic.

Run: python -m routing.classifier.train            # train on everything, write weights.npz
     python -m routing.classifier.train --cv 5     # k-fold cross-validation on the training set only
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from routing.classifier.core import decide
from routing.classifier.features import FEATURE_VERSION, N_BUCKETS, N_DENSE, features_of, window_of
from routing.classifier.figures import figures_of
from routing.classifier.heuristic import Guess, guess_task
from routing.classifier.linear import WEIGHTS_PATH, LinearModel, Scores, model_save
from routing.decision import COMPLEXITIES, TASKS

TRAIN_PATH = Path(__file__).with_name("data") / "train.jsonl"
CV_PATH = Path(__file__).with_name("cv.json")  # written by --cv, read by evaluate
LEARNED_TASKS = tuple(task for task in TASKS if task != "tool_use")
SEED = 13
EPOCHS = 8  # 4-fold CV: 24 -> 0.877, 12 -> 0.884 (7,365 rows); 12 -> 0.891, 8 -> 0.895 (8,116 rows); with DECAY, by writer: 5, 8, 12 all 0.915
BATCH = 128
LEARNING_RATE = 0.02
# The learning rate falls linearly to zero over training. At a constant rate the last batches decided where the weights
# stopped, and CV by writer moved by up to 0.05 per family with the order of train.jsonl alone; writer-held-out CV on the
# same 27,188 rows: constant 0.897, decaying 0.909 (docs/classifier.md).
DECAY = True
L2 = 3e-6  # applied to the bucket rows a batch touches; writer-held-out CV (15,175 rows, instruction gain 2): 3e-6 0.834, 1e-5 0.828; gain 4: 3e-6 0.864, 1e-5 0.844, 0 0.839
THRESHOLD = 0.6  # 4-fold CV grid on 8,116 hand-written rows: (0.6, 0.5) best in every run, +0.002-0.005 over the model alone
RULE_WEIGHT = 0.5  # likewise (1.0 lost 0.005-0.01)
BALANCE = 1.0  # class-balancing exponent (weight = (mean class count / class count) ** BALANCE); CV: 1.0 ties 0.5 overall, lifts the weakest family
TEMPLATE_WEIGHT = 1.0  # relative weight of template-generated rows against hand-written ones
# Scale of each hashed group (Features.hashed: user words, user chars, instruction span, system, ask segments), per head.
# Writer-held-out CV of the task head on 15,175 rows (docs/classifier.md): instruction span x1 0.817, x2 0.828,
# x4 0.844 (0.864 with L2 3e-6), x6 0.860, x8 0.856; the complexity head is best at unit gains (0.665 vs 0.650 at x6).
# Ask segments on 23,085 rows: task head x0 0.877, x1 0.889, x2 0.897, x3 0.900, x4 0.892; complexity x0 0.681, x1 0.689.
TASK_GAINS = (1.0, 1.0, 4.0, 1.0, 3.0)
COMPLEXITY_GAINS = (1.0, 1.0, 1.0, 1.0, 1.0)
COMPLEXITY_OFFSETS = (-0.25, 0.0, 0.25)  # 4-fold CV grid over (easy, hard) prior shifts: 0.731 -> 0.734


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
    weight: np.ndarray


def records_load(path: Path) -> list[dict]:
    """Read a JSONL file of labelled requests."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _balance(labels: np.ndarray, exponent: float) -> np.ndarray:
    """Return per-row weights that partly equalise label frequencies (labels < 0 get weight 1)."""
    weights = np.ones(len(labels), dtype=np.float32)
    valid = labels >= 0
    counts = np.bincount(labels[valid])
    present = counts[counts > 0]
    scale = (present.mean() / np.maximum(counts, 1)) ** exponent
    weights[valid] = scale[labels[valid]]
    return weights


def dataset_build(
    records: list[dict],
    *,
    balance: float = BALANCE,
    template_weight: float = TEMPLATE_WEIGHT,
    gains: tuple[float, ...],
) -> Dataset:
    """Hash every record and compact the used buckets into consecutive columns (each group scaled by its gain)."""
    rows, cols, vals, dense = [], [], [], []
    for row, record in enumerate(records):
        features = features_of(window_of(system=record.get("system", ""), user=record["user"]))
        for gain, indices in zip(gains, features.hashed(), strict=True):
            if len(indices) and gain:
                rows.append(np.full(len(indices), row))
                cols.append(indices)
                vals.append(np.full(len(indices), gain * len(indices) ** -0.5, dtype=np.float32))
        dense.append(features.dense)
    # Merge repeated (row, bucket) pairs: long prompts repeat n-grams, and every non-zero costs each epoch.
    keys, inverse = np.unique(np.concatenate(rows) * N_BUCKETS + np.concatenate(cols), return_inverse=True)
    merged = np.bincount(inverse, weights=np.concatenate(vals)).astype(np.float32)
    buckets, compact = np.unique(keys % N_BUCKETS, return_inverse=True)
    task = np.array([LEARNED_TASKS.index(r["task"]) if r["task"] in LEARNED_TASKS else -1 for r in records])
    weight = _balance(task, balance) * np.array(
        [template_weight if r.get("source") == "template" else 1.0 for r in records], dtype=np.float32
    )
    return Dataset(
        rows=keys // N_BUCKETS,
        cols=compact,
        vals=merged,
        buckets=buckets,
        dense=np.stack(dense),
        task=task,
        complexity=np.array([COMPLEXITIES.index(r["complexity"]) for r in records]),
        weight=weight / weight.mean(),
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
    return target, mask * data.weight[:, None]


def _head_softmax(logits: np.ndarray, n_tasks: int) -> np.ndarray:
    """Apply a softmax to each head's block of logits."""
    probs = np.empty_like(logits)
    for block in (slice(0, n_tasks), slice(n_tasks, None)):
        shifted = np.exp(logits[:, block] - logits[:, block].max(axis=1, keepdims=True))
        probs[:, block] = shifted / shifted.sum(axis=1, keepdims=True)
    return probs


def _batches(data: Dataset, order: np.ndarray, size: int) -> list[tuple]:
    """Precompute each mini-batch: its rows, its non-zeros' local rows and values, and its unique columns."""
    counts = np.bincount(data.rows, minlength=len(data.task))
    starts = np.concatenate([[0], np.cumsum(counts)])
    batches = []
    for first in range(0, len(order), size):
        rows = order[first : first + size]
        spans = [np.arange(starts[row], starts[row + 1]) for row in rows]
        nnz = np.concatenate(spans)
        local = np.repeat(np.arange(len(rows)), [len(span) for span in spans])
        columns, inverse = np.unique(data.cols[nnz], return_inverse=True)
        batches.append((rows, local, data.vals[nnz][:, None], columns, inverse))
    return batches


def learning_rate(step: int, total: int, *, decay: bool = DECAY) -> float:
    """Return the learning rate of step 1..total: constant, or falling linearly from LEARNING_RATE to LEARNING_RATE / total."""
    return LEARNING_RATE * (1.0 - (step - 1) / total) if decay else LEARNING_RATE


def fit(
    data: Dataset, *, epochs: int = EPOCHS, seed: int = SEED, l2: float = L2, batch: int = BATCH, decay: bool = DECAY
) -> tuple[np.ndarray, np.ndarray]:
    """Fit both softmax heads by mini-batch Adam (lazy on the sparse rows) on weighted cross-entropy with L2.

    Returns the sparse (per used bucket) and dense weights. Deterministic for a given seed.
    """
    rng = np.random.default_rng(seed)
    n_tasks = len(LEARNED_TASKS)
    width = n_tasks + len(COMPLEXITIES)
    target, mask = _targets(data)
    sparse = (rng.standard_normal((len(data.buckets), width)) * 1e-3).astype(np.float32)
    dense = np.zeros((data.dense.shape[1], width), dtype=np.float32)
    moments = {"sparse": (np.zeros_like(sparse), np.zeros_like(sparse)), "dense": (np.zeros_like(dense), np.zeros_like(dense))}
    batches = _batches(data, rng.permutation(len(data.task)), batch)
    step = 0
    total = epochs * len(batches)
    for _ in range(epochs):
        for index in rng.permutation(len(batches)):
            rows, local, vals, columns, inverse = batches[index]
            step += 1
            weights = sparse[columns]
            contrib = weights[inverse] * vals
            logits = np.add.reduceat(contrib, np.flatnonzero(np.diff(local, prepend=-1)))
            logits += data.dense[rows] @ dense
            error = ((_head_softmax(logits, n_tasks) - target[rows]) * mask[rows] / len(rows)).astype(np.float32)
            by_nnz = error[local] * vals
            grad_sparse = np.stack([np.bincount(inverse, weights=by_nnz[:, j], minlength=len(columns)) for j in range(width)], axis=1)
            grad_sparse = grad_sparse.astype(np.float32) + l2 * weights
            grad_dense = data.dense[rows].T @ error + l2 * dense
            correction = learning_rate(step, total, decay=decay) * np.sqrt(1 - 0.999**step) / (1 - 0.9**step)
            m, v = moments["sparse"]
            m_rows = 0.9 * m[columns] + 0.1 * grad_sparse
            v_rows = 0.999 * v[columns] + 0.001 * grad_sparse * grad_sparse
            m[columns], v[columns] = m_rows, v_rows
            sparse[columns] = weights - correction * m_rows / (np.sqrt(v_rows) + 1e-8)
            m, v = moments["dense"]
            m *= 0.9
            m += 0.1 * grad_dense
            v *= 0.999
            v += 0.001 * grad_dense * grad_dense
            dense -= correction * m / (np.sqrt(v) + 1e-8)
    return sparse, dense


def model_train(
    records: list[dict],
    *,
    epochs: int = EPOCHS,
    l2: float = L2,
    balance: float = BALANCE,
    template_weight: float = TEMPLATE_WEIGHT,
    threshold: float = THRESHOLD,
    rule_weight: float = RULE_WEIGHT,
    complexity_offsets: tuple[float, ...] = COMPLEXITY_OFFSETS,
    task_gains: tuple[float, ...] = TASK_GAINS,
    complexity_gains: tuple[float, ...] = COMPLEXITY_GAINS,
    decay: bool = DECAY,
) -> LinearModel:
    """Train a LinearModel on labelled records.

    With different gains per head, each head is fitted on its own scaling of the features and the two
    are stored side by side in one table (columns: task head, then complexity head).
    """
    n_tasks = len(LEARNED_TASKS)
    buckets = np.zeros((N_BUCKETS, n_tasks + len(COMPLEXITIES)), dtype=np.float32)
    dense = np.zeros((N_DENSE, n_tasks + len(COMPLEXITIES)), dtype=np.float32)
    if task_gains == complexity_gains:
        heads = [(slice(0, None), task_gains)]
    else:
        heads = [(slice(0, n_tasks), task_gains), (slice(n_tasks, None), complexity_gains)]
    for columns, gains in heads:
        data = dataset_build(records, balance=balance, template_weight=template_weight, gains=gains)
        sparse, head_dense = fit(data, epochs=epochs, l2=l2, decay=decay)
        buckets[data.buckets, columns] = sparse[:, columns]
        dense[:, columns] = head_dense[:, columns]
    # Dense feature 0 is the constant bias, so a prior shift of the complexity head costs nothing at inference.
    dense[0, n_tasks:] += np.asarray(complexity_offsets, dtype=np.float32)
    return LinearModel(
        buckets=buckets,
        dense=dense,
        tasks=LEARNED_TASKS,
        complexities=COMPLEXITIES,
        threshold=threshold,
        rule_weight=rule_weight,
        task_gains=tuple(float(g) for g in task_gains),
        complexity_gains=tuple(float(g) for g in complexity_gains),
    )


def fold_of(record: dict, k: int) -> int:
    """Return a record's cross-validation fold, stable and equal for identical prompts."""
    return int.from_bytes(hashlib.blake2b(record["user"].encode("utf-8"), digest_size=4).digest(), "little") % k


def writer_of(record: dict) -> str:
    """Return who wrote a training row: its data/hand/vN/<writer> folder, "v1" for the first hand files, or "template"."""
    if record.get("source") != "hand":
        return "template"
    parts = record.get("origin", "").split(":")[0].split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else "v1"


def writer_folds(records: list[dict], k: int) -> np.ndarray:
    """Assign whole writers to k folds (largest first, each to the lightest fold); templates by prompt hash.

    Holding out everything one writer wrote scores the model on a style it never saw, as a held-out set written
    by someone else does; folds by prompt hash let a writer's habits sit on both sides.
    """
    writers = [writer_of(record) for record in records]
    sizes = Counter(writers)
    load = [0] * k
    fold_by_writer: dict[str, int] = {}
    for writer in sorted((w for w in sizes if w != "template"), key=lambda w: (-sizes[w], w)):
        fold = min(range(k), key=lambda f: (load[f], f))
        fold_by_writer[writer] = fold
        load[fold] += sizes[writer]
    return np.array([fold_by_writer.get(w, fold_of(r, k)) for w, r in zip(writers, records, strict=True)])


def cv_folds(records: list[dict], k: int, *, by: str = "prompt", train_only: tuple[str, ...] = ()) -> np.ndarray:
    """Return each record's cross-validation fold (by prompt hash or by writer); -1 for rows of the writers
    named by a prefix in `train_only`, which are trained on in every fold and never scored. The other rows
    get the folds they would get without them."""
    pinned = np.array([writer_of(record).startswith(train_only) for record in records], dtype=bool)
    rest = [record for record, pin in zip(records, pinned, strict=True) if not pin]
    folds = np.full(len(records), -1)
    folds[~pinned] = writer_folds(rest, k) if by == "writer" else [fold_of(record, k) for record in rest]
    return folds


def cross_validate(
    records: list[dict], *, k: int, by: str = "prompt", train_only: tuple[str, ...] = (), **params: float
) -> dict:
    """K-fold CV on the training set; score only hand-written rows of each held fold (templates leak across folds).

    `by="prompt"` folds by a hash of the prompt; `by="writer"` holds out whole writers (see writer_folds).
    Rows of writers named by a prefix in `train_only` (e.g. "v7/") are in every fold's training set and never
    scored, and the other rows' folds are those they get without them: run once so and once without those
    rows (`--leave-out`), and the two figures say what the added writers do for the others.
    Returns accuracy of the task head (with the rule blend), of the complexity head, and a grid over
    the fallback threshold and rule weight computed from the same out-of-fold probabilities.
    """
    epochs = int(params.pop("epochs", EPOCHS))
    folds = cv_folds(records, k, by=by, train_only=train_only)
    out: list[tuple[dict, np.ndarray, np.ndarray, Guess]] = []
    for fold in range(k):
        model = model_train([r for r, f in zip(records, folds, strict=True) if f != fold], epochs=epochs, **params)
        for record, f in zip(records, folds, strict=True):
            if f != fold or record.get("source") == "template" or record.get("has_tools"):
                continue
            window = window_of(system=record.get("system", ""), user=record["user"])
            scores = model.scores(features_of(window))
            out.append((record, scores.task, scores.complexity, guess_task(window)))
    grid = {}
    for threshold in (0.0, 0.3, 0.4, 0.5, 0.6, 0.7):
        for rule_weight in (0.0, 0.25, 0.5, 1.0):
            model = LinearModel(np.zeros((1, 1)), np.zeros((1, 1)), LEARNED_TASKS, COMPLEXITIES, threshold, rule_weight)
            hits = 0
            for record, task_p, _, guess in out:
                scores = Scores(task=task_p, complexity=np.ones(len(COMPLEXITIES)))
                hits += decide(model, scores, None, has_tools=False, guess=guess).task == record["task"]
            grid[(threshold, rule_weight)] = hits / len(out)
    truth = np.array([COMPLEXITIES.index(r["complexity"]) for r, _, _, _ in out])
    log_p = np.log(np.stack([c for _, _, c, _ in out]) + 1e-9)
    offsets = {}
    for easy in (-0.5, -0.25, 0.0, 0.25, 0.5):
        for hard in (-0.25, 0.0, 0.25, 0.5, 0.75, 1.0):
            offsets[(easy, 0.0, hard)] = float(((log_p + np.array([easy, 0.0, hard])).argmax(axis=1) == truth).mean())
    task_hits = sum(LEARNED_TASKS[int(t.argmax())] == r["task"] for r, t, _, _ in out)
    complexity_hits = sum(COMPLEXITIES[int(c.argmax())] == r["complexity"] for r, _, c, _ in out)
    final = LinearModel(np.zeros((1, 1)), np.zeros((1, 1)), LEARNED_TASKS, COMPLEXITIES, THRESHOLD, RULE_WEIGHT)
    decided = [
        decide(final, Scores(task=t, complexity=c), None, has_tools=False, guess=guess) for _, t, c, guess in out
    ]
    shipped = figures_of(
        [(r["task"], d.task) for (r, _, _, _), d in zip(out, decided, strict=True)],
        [(r["complexity"], d.complexity) for (r, _, _, _), d in zip(out, decided, strict=True)],
        sum(d.estimated for d in decided),
    )
    return {
        "shipped": shipped,
        "scored": len(out),
        "task_model_only": task_hits / len(out),
        "complexity": complexity_hits / len(out),
        "grid": grid,
        "complexity_offsets": offsets,
    }


def _writers_arg(text: str) -> tuple[str, ...]:
    """Parse a command line's writer prefixes: v7/,v6/f8."""
    return tuple(prefix for prefix in text.split(",") if prefix)


def _gains_arg(text: str) -> tuple[float, ...]:
    """Parse a command line's group gains: words,chars,instruction,system,ask."""
    return tuple(float(gain) for gain in text.split(","))


def main() -> None:
    """Train from train.jsonl and write the weights file, or cross-validate."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=TRAIN_PATH)
    parser.add_argument("--out", type=Path, default=WEIGHTS_PATH)
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--cv", type=int, default=0, help="run k-fold cross-validation instead of writing weights")
    parser.add_argument("--l2", type=float, default=L2)
    parser.add_argument("--decay", action=argparse.BooleanOptionalAction, default=DECAY, help="learning rate falls linearly to zero")
    parser.add_argument("--balance", type=float, default=BALANCE)
    parser.add_argument("--template-weight", type=float, default=TEMPLATE_WEIGHT)
    parser.add_argument("--task-gains", type=_gains_arg, default=TASK_GAINS, help="words,chars,instruction,system,ask")
    parser.add_argument("--complexity-gains", type=_gains_arg, default=COMPLEXITY_GAINS, help="likewise, for the complexity head")
    parser.add_argument("--cv-by", choices=("prompt", "writer"), default="prompt", help="with --cv, fold by prompt hash or hold out whole writers")
    parser.add_argument("--cv-out", type=Path, default=None, help=f"with --cv, write the figures here (ship: {CV_PATH.name}; by writer: cv_writer.json)")
    parser.add_argument("--cv-train-only", type=_writers_arg, default=(), help="with --cv, writers (prefixes such as v7/) always trained on, never scored")
    parser.add_argument("--leave-out", type=_writers_arg, default=(), help="writers (prefixes) whose rows are not read at all")
    args = parser.parse_args()
    records = [record for record in records_load(args.data) if not writer_of(record).startswith(args.leave_out)]
    params = {"l2": args.l2, "decay": args.decay, "balance": args.balance, "template_weight": args.template_weight, "task_gains": args.task_gains, "complexity_gains": args.complexity_gains}
    if args.cv:
        result = cross_validate(records, k=args.cv, by=args.cv_by, train_only=args.cv_train_only, epochs=args.epochs, **params)
        print(f"cv k={args.cv} by {args.cv_by} {params} epochs={args.epochs} train-only {args.cv_train_only} "
              f"left out {args.leave_out}: scored {result['scored']} hand-written rows")
        print(f"  task (model only) {result['task_model_only']:.3f}  complexity {result['complexity']:.3f}")
        best = max(result["grid"].items(), key=lambda item: item[1])
        print(f"  best threshold/rule_weight {best[0]} -> task {best[1]:.3f}")
        for (threshold, rule_weight), accuracy in sorted(result["grid"].items()):
            print(f"    threshold {threshold:.2f} rule_weight {rule_weight:.2f}: {accuracy:.3f}")
        best = max(result["complexity_offsets"].items(), key=lambda item: item[1])
        print(f"  best complexity offsets (easy, standard, hard) {best[0]} -> complexity {best[1]:.3f}")
        shipped = result["shipped"]
        print(f"  at the shipped settings: task {shipped['task_accuracy']:.3f}  complexity {shipped['complexity_accuracy']:.3f}")
        print("  per family: " + ", ".join(f"{t} {a:.3f}" for t, a in shipped["per_family_accuracy"].items()))
        if args.cv_out is not None:
            settings = {**params, "epochs": args.epochs, "threshold": THRESHOLD, "rule_weight": RULE_WEIGHT}
            record = {"k": args.cv, "by": args.cv_by, "scored": result["scored"], "feature_version": FEATURE_VERSION, "settings": settings}
            if args.cv_train_only or args.leave_out:
                record |= {"train_only": list(args.cv_train_only), "left_out": list(args.leave_out)}
            args.cv_out.write_text(json.dumps({**record, **shipped}, indent=1) + "\n", encoding="utf-8")
            print(f"  wrote {args.cv_out}")
        return
    model = model_train(records, epochs=args.epochs, **params)
    model_save(model, args.out)
    print(f"trained on {len(records)} records; wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
