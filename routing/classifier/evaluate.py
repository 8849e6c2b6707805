"""Evaluate the shipped classifier on the held-out sets, beside the cross-validation figures stored by training.

Run: python -m routing.classifier.evaluate [--json PATH]      (make eval-routing)

Prints, for held-out v2 (data/heldout_v2.jsonl, frozen) and v1 (data/heldout.jsonl): task accuracy,
per-family accuracy, the task confusion matrix, complexity agreement and the complexity confusion
matrix; then the cross-validation figures that `train --cv` wrote to cv.json (folds by prompt) and
cv_writer.json (`--cv-by writer`: whole writers held out), with no retraining here.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from routing.classifier.core import Classifier
from routing.classifier.figures import figures_of, report_lines
from routing.classifier.linear import WEIGHTS_PATH

DATA_DIR = Path(__file__).with_name("data")
HELDOUT_V2_PATH = DATA_DIR / "heldout_v2.jsonl"
HELDOUT_PATH = DATA_DIR / "heldout.jsonl"
CV_PATH = Path(__file__).with_name("cv.json")
CV_WRITER_PATH = Path(__file__).with_name("cv_writer.json")


def records_read(path: Path) -> list[dict]:
    """Read a JSONL file of labelled requests."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def evaluation_run(records: list[dict], classifier: Classifier) -> dict:
    """Classify every record and return accuracy figures, per-family accuracy and the confusion matrices."""
    tasks, complexities, estimated = [], [], 0
    for record in records:
        result = classifier.classify(
            system=record.get("system", ""), user=record["user"], has_tools=bool(record.get("has_tools", False))
        )
        tasks.append((record["task"], result.task))
        complexities.append((record["complexity"], result.complexity))
        estimated += result.estimated
    return figures_of(tasks, complexities, estimated)


def _cv_name(cv: dict) -> str:
    """Name a stored cross-validation run by how its folds were made."""
    return f"cv by {cv.get('by', 'prompt')} (k={cv.get('k')})"


def summary_lines(results: dict[str, dict], cvs: list[dict]) -> list[str]:
    """Render a side-by-side summary of the held-out sets and the cross-validation runs."""
    lines = ["", "== summary", f"{'':<22} {'task':>6} {'complexity':>10}  weakest family"]
    rows = {**results, **{_cv_name(cv): cv for cv in cvs}}
    for name, figures in rows.items():
        family, accuracy = min(figures["per_family_accuracy"].items(), key=lambda item: item[1])
        lines.append(
            f"{name:<22} {figures['task_accuracy']:>6.3f} {figures['complexity_accuracy']:>10.3f}  {family} {accuracy:.3f}"
        )
    return lines


def main() -> None:
    """Print held-out v2 and v1 figures beside the stored CV figures; optionally write them as JSON."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--weights", type=Path, default=WEIGHTS_PATH)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    args = parser.parse_args()
    classifier = Classifier.from_path(args.weights)
    results = {
        "held-out v2": evaluation_run(records_read(HELDOUT_V2_PATH), classifier),
        "held-out v1": evaluation_run(records_read(HELDOUT_PATH), classifier),
    }
    cvs = [json.loads(path.read_text(encoding="utf-8")) for path in (CV_PATH, CV_WRITER_PATH) if path.exists()]
    lines: list[str] = []
    for name, figures in results.items():
        lines += [*report_lines(figures, name), ""]
    if not cvs:
        lines.append(f"no cross-validation figures at {CV_PATH} (run: python -m routing.classifier.train --cv 4)")
    for index, cv in enumerate(cvs):
        title = f"cross-validation by {cv.get('by', 'prompt')}, k={cv['k']}, {cv['scored']} hand-written training rows"
        lines += [""] * bool(index) + report_lines(cv, title)
    print("\n".join(lines + summary_lines(results, cvs)))
    if args.json is not None:
        args.json.write_text(json.dumps({**results, "cv": cvs}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
