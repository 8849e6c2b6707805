"""Accuracy figures (per family, confusion matrices) and their printed form, shared by evaluation and CV."""

from __future__ import annotations

from collections.abc import Sequence

from routing.decision import COMPLEXITIES, TASKS


def figures_of(
    tasks: Sequence[tuple[str, str]], complexities: Sequence[tuple[str, str]], estimated: int = 0
) -> dict:
    """Return accuracy figures from (truth, predicted) pairs for the task and the complexity heads."""
    confusion = {truth: dict.fromkeys(TASKS, 0) for truth in TASKS}
    complexity_confusion = {truth: dict.fromkeys(COMPLEXITIES, 0) for truth in COMPLEXITIES}
    for truth, predicted in tasks:
        confusion[truth][predicted] += 1
    for truth, predicted in complexities:
        complexity_confusion[truth][predicted] += 1
    total = max(len(tasks), 1)
    return {
        "examples": len(tasks),
        "task_accuracy": round(sum(t == p for t, p in tasks) / total, 4),
        "complexity_accuracy": round(sum(t == p for t, p in complexities) / max(len(complexities), 1), 4),
        "estimated_share": round(estimated / total, 4),
        "per_family_accuracy": {
            task: round(row[task] / sum(row.values()), 4) for task, row in confusion.items() if sum(row.values())
        },
        "task_confusion": confusion,
        "complexity_confusion": complexity_confusion,
    }


def _matrix_lines(matrix: dict[str, dict[str, int]], labels: Sequence[str]) -> list[str]:
    """Render a confusion matrix, rows = truth, columns = predicted (rows with no examples left out)."""
    short = [label[:6] for label in labels]
    lines = ["truth\\pred    " + " ".join(f"{name:>6}" for name in short)]
    for truth in labels:
        if sum(matrix[truth].values()):
            lines.append(f"{truth:<13} " + " ".join(f"{matrix[truth][pred]:>6}" for pred in labels))
    return lines


def report_lines(figures: dict, title: str) -> list[str]:
    """Render figures as printable lines under a title."""
    lines = [
        f"== {title}",
        f"examples:            {figures['examples']}",
        f"task accuracy:       {figures['task_accuracy']:.3f}",
        f"complexity accuracy: {figures['complexity_accuracy']:.3f}",
    ]
    if "estimated_share" in figures:
        lines.append(f"estimated share:     {figures['estimated_share']:.3f}")
    lines += ["", "per-family task accuracy:"]
    lines += [f"  {task:<14} {accuracy:.3f}" for task, accuracy in figures["per_family_accuracy"].items()]
    lines += ["", "task confusion (rows = truth, cols = predicted):"]
    lines += _matrix_lines(figures["task_confusion"], TASKS)
    lines += ["", "complexity confusion (rows = truth, cols = predicted):"]
    lines += _matrix_lines(figures["complexity_confusion"], COMPLEXITIES)
    return lines
