"""Build the training set (data/train.jsonl) from hand-written data files and templates; deterministic.

Run: python -m routing.classifier.make_data

Sources, all under data/ and all training-only:
* hand/*.txt: "@ family band" headers, then one prompt a line (`\\n` for a newline);
* hand/*.jsonl and hand/{v2,...,v8}/**/*.jsonl: one object a line with `user`, `task`, `complexity`
  and optionally `system` and `lang` (pools of materials or instructions, which have no `user`, are
  skipped); v4 (hand/v4/{e1,e2}), v5 (hand/v5/{f1..f7}), v6 (hand/v6/f8..f17), v7 (hand/v7/g1..g4) and
  v8 (hand/v8/{h1,h2,i1..i7}; v6, v7 and v8 were each told which families to write most of) were written by
  helpers who never saw the project's data;
* templates.json: slot-filled templates (capped at PER_TEMPLATE fills each, minus `excluded_fills`) and
  tool_use rows.

Nothing here reads a held-out set: tests/routing/test_training_decontaminated.py is what checks that
no training prompt is a near-duplicate of a held-out one.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

from routing.decision import COMPLEXITIES, TASKS

DATA_DIR = Path(__file__).with_name("data")
OUT_PATH = DATA_DIR / "train.jsonl"
HAND_DIR = DATA_DIR / "hand"
TEMPLATES_PATH = DATA_DIR / "templates.json"
SEED = 20261012
PER_TEMPLATE = 3  # distinct fills kept per template: templated rows are near-duplicates, so cap them
TOOL_ROWS = 120
LEARNED_TASKS = tuple(task for task in TASKS if task != "tool_use")


def _templates() -> dict[str, Any]:
    """Return the template data (system prompts, slots, passages, templates)."""
    return json.loads(TEMPLATES_PATH.read_text(encoding="utf-8"))


def _fill(template: str, rng: random.Random, data: dict[str, Any]) -> str:
    """Fill every {slot} of a template with a random value."""
    values: dict[str, str] = {}
    for _, name, _, _ in string.Formatter().parse(template):
        if name is None or name in values:
            continue
        values[name] = _slot_value(name, rng, values, data)
    return template.format(**values)


def _slot_value(name: str, rng: random.Random, chosen: dict[str, str], data: dict[str, Any]) -> str:
    """Return a value for one slot, keeping numbered variants distinct from their base slot."""
    base = name.rstrip("0123456789")
    if base == "passage":
        return rng.choice(data["passages"])
    if base == "passage_other":
        return rng.choice(data["passages_other"])
    slots = data["slots"]
    if base == "tool_ask_lower":
        ask = rng.choice(slots["tool_ask"])
        return ask[0].lower() + ask[1:]
    pool = slots.get(base) or data["translated_slots"][base]
    options = [value for value in pool if value not in chosen.values()] or pool
    return rng.choice(options)


def _template_records(rng: random.Random, data: dict[str, Any]) -> list[dict]:
    """Return the template fills (at most PER_TEMPLATE distinct ones per template) and the tool_use rows."""
    records: list[dict] = []
    excluded = set(data.get("excluded_fills", ()))  # fills too close to prompts outside the training set
    for task, templates in data["templates"].items():
        seen: set[str] = set()
        for complexity, template in templates:
            kept = 0
            for _ in range(PER_TEMPLATE * 4):
                user = _fill(template, rng, data)
                if user in seen or user in excluded:
                    continue
                seen.add(user)
                records.append(_record(task, complexity, user, rng.choice(data["systems"]), source="template"))
                kept += 1
                if kept >= PER_TEMPLATE:
                    break
    tools = data["tool_templates"]
    for attempt in range(TOOL_ROWS):
        complexity, template = tools[attempt % len(tools)]
        user = _fill(template, rng, data)
        records.append(_record("tool_use", complexity, user, rng.choice(data["systems"]), source="template", tools=True))
    return records


def _record(task: str, complexity: str, user: str, system: str, *, source: str, tools: bool = False, **extra: str) -> dict:
    """Return one training record."""
    record = {"system": system, "user": user, "task": task, "complexity": complexity, "source": source, **extra}
    if tools:
        record["has_tools"] = True
    return record


def _valid(task: object, complexity: object, user: object) -> bool:
    """Return whether a hand-written row has a learned family, a known band and a non-empty prompt."""
    return task in LEARNED_TASKS and complexity in COMPLEXITIES and isinstance(user, str) and bool(user.strip())


def hand_files(directory: Path = HAND_DIR) -> list[Path]:
    """Return every hand-written data file, in a stable order."""
    files = sorted(directory.glob("*.txt")) + sorted(directory.glob("*.jsonl"))
    for version in ("v2", "v3", "v4", "v5", "v6", "v7", "v8"):
        files += sorted((directory / version).glob("**/*.jsonl"))
    return files


def hand_rows(directory: Path = HAND_DIR) -> tuple[list[dict], list[str]]:
    """Read every hand-written row; return the rows (with an `origin` of file:line) and problems found.

    Rows that do not parse or lack a known family, band or prompt are skipped and reported.
    """
    rows: list[dict] = []
    problems: list[str] = []
    for path in hand_files(directory):
        name = path.relative_to(directory).as_posix()
        if path.suffix == ".txt":
            parsed = _txt_rows(path, name, problems)
        else:
            parsed = _jsonl_rows(path, name, problems)
        rows.extend(parsed)
    return rows, problems


def _txt_rows(path: Path, name: str, problems: list[str]) -> list[dict]:
    """Read a "@ family band" text file."""
    rows: list[dict] = []
    task = complexity = ""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("@ "):
            task, complexity = (line[2:].split() + ["", ""])[:2]
            continue
        user = line.strip().replace("\\n", "\n")
        if not _valid(task, complexity, user):
            problems.append(f"{name}:{number}: no valid '@ family band' header")
            continue
        rows.append({"user": user, "task": task, "complexity": complexity, "origin": f"{name}:{number}"})
    return rows


def _jsonl_rows(path: Path, name: str, problems: list[str]) -> list[dict]:
    """Read a JSONL file of labelled prompts; pools without `user` keys are skipped whole."""
    rows: list[dict] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            problems.append(f"{name}:{number}: not JSON")
            continue
        if not isinstance(item, dict):
            problems.append(f"{name}:{number}: not an object")
            continue
        if "user" not in item and ("material" in item or "instruction" in item):
            return []
        system = item.get("system")
        if not _valid(item.get("task"), item.get("complexity"), item.get("user")) or not isinstance(system, str | None):
            problems.append(f"{name}:{number}: bad user, task, complexity or system")
            continue
        row = {"user": item["user"], "task": item["task"], "complexity": item["complexity"], "origin": f"{name}:{number}"}
        if system is not None:
            row["system"] = system
        if isinstance(item.get("lang"), str):
            row["lang"] = item["lang"]
        rows.append(row)
    return rows


def generate(seed: int = SEED) -> list[dict]:
    """Return the deterministic list of training records (hand-written rows once each, then templates)."""
    rng = random.Random(seed)
    data = _templates()
    records = _template_records(rng, data)
    rows, _ = hand_rows()
    seen: set[str] = set()
    for row in rows:
        key = " ".join(row["user"].lower().split())
        if key in seen:
            continue
        seen.add(key)
        system = row["system"] if "system" in row else rng.choice(data["systems"])
        extra = {"origin": row["origin"], **({"lang": row["lang"]} if "lang" in row else {})}
        records.append(_record(row["task"], row["complexity"], row["user"], system, source="hand", **extra))
    rng.shuffle(records)
    return records


def main() -> None:
    """Write data/train.jsonl, reporting any skipped hand-written rows."""
    _, problems = hand_rows()
    for problem in problems:
        print(f"skipped {problem}")
    records = generate()
    OUT_PATH.parent.mkdir(parents=True, exist_ok=True)
    with OUT_PATH.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    hand = sum(record["source"] == "hand" for record in records)
    print(f"wrote {len(records)} records ({hand} hand-written) to {OUT_PATH}")


if __name__ == "__main__":
    main()
