"""Evaluate the shipped classifier on data/heldout.jsonl and print accuracy figures.

Run: python -m routing.classifier.evaluate [--json PATH]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from routing.classifier.core import Classifier
from routing.classifier.linear import WEIGHTS_PATH
from routing.decision import COMPLEXITIES, TASKS

HELDOUT_PATH = Path(__file__).with_name("data") / "heldout.jsonl"


def evaluation_run(records: list[dict], classifier: Classifier) -> dict:
    """Classify every record and return accuracy figures, per-family accuracy and the confusion matrix."""
    confusion = {truth: dict.fromkeys(TASKS, 0) for truth in TASKS}
    complexity_confusion = {truth: dict.fromkeys(COMPLEXITIES, 0) for truth in COMPLEXITIES}
    task_hits = complexity_hits = estimated = 0
    for record in records:
        result = classifier.classify(
            system=record.get("system", ""), user=record["user"], has_tools=bool(record.get("has_tools", False))
        )
        confusion[record["task"]][result.task] += 1
        complexity_confusion[record["complexity"]][result.complexity] += 1
        task_hits += result.task == record["task"]
        complexity_hits += result.complexity == record["complexity"]
        estimated += result.estimated
    total = len(records)
    per_family = {
        task: round(row[task] / sum(row.values()), 4) for task, row in confusion.items() if sum(row.values())
    }
    return {
        "examples": total,
        "task_accuracy": round(task_hits / total, 4),
        "complexity_accuracy": round(complexity_hits / total, 4),
        "estimated_share": round(estimated / total, 4),
        "per_family_accuracy": per_family,
        "task_confusion": confusion,
        "complexity_confusion": complexity_confusion,
    }


def _matrix_lines(matrix: dict[str, dict[str, int]], labels: tuple[str, ...]) -> list[str]:
    """Render a confusion matrix, rows = truth, columns = predicted."""
    short = [label[:6] for label in labels]
    lines = ["truth\\pred    " + " ".join(f"{name:>6}" for name in short)]
    for truth in labels:
        lines.append(f"{truth:<13} " + " ".join(f"{matrix[truth][pred]:>6}" for pred in labels))
    return lines


def report_lines(figures: dict) -> list[str]:
    """Render evaluation figures as printable lines."""
    lines = [
        f"held-out examples:   {figures['examples']}",
        f"task accuracy:       {figures['task_accuracy']:.3f}",
        f"complexity accuracy: {figures['complexity_accuracy']:.3f}",
        f"estimated share:     {figures['estimated_share']:.3f}",
        "",
        "per-family task accuracy:",
    ]
    lines += [f"  {task:<14} {accuracy:.3f}" for task, accuracy in figures["per_family_accuracy"].items()]
    lines += ["", "task confusion (rows = truth, cols = predicted):"]
    lines += _matrix_lines(figures["task_confusion"], TASKS)
    lines += ["", "complexity confusion (rows = truth, cols = predicted):"]
    lines += _matrix_lines(figures["complexity_confusion"], COMPLEXITIES)
    return lines


def main() -> None:
    """Print held-out figures and optionally write them as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=HELDOUT_PATH)
    parser.add_argument("--weights", type=Path, default=WEIGHTS_PATH)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    args = parser.parse_args()
    with args.data.open(encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    figures = evaluation_run(records, Classifier.from_path(args.weights))
    print("\n".join(report_lines(figures)))
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
