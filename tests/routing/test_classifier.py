from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from routing.classifier import Classification, Classifier, classification_key, classify, make_data
from routing.classifier.evaluate import CV_PATH, CV_WRITER_PATH, HELDOUT_PATH, HELDOUT_V2_PATH, evaluation_run
from routing.classifier.evaluate import main as evaluate_main
from routing.classifier.features import FEATURE_VERSION
from routing.classifier.linear import WEIGHTS_PATH
from routing.decision import COMPLEXITIES, TASKS

CLEAR_EXAMPLES = [
    ("coding", "Write a Python function that returns the n-th Fibonacci number using memoization."),
    ("coding", "My Java code throws a NullPointerException on line 12 when the list is empty, how do I fix it?"),
    ("maths", "Solve 3x + 7 = 22 for x."),
    ("maths", "Compute the integral of 2x from 0 to 5."),
    ("reasoning", "What are the trade-offs between hiring a contractor and a full-time employee for our project?"),
    ("reasoning", "Anna is older than Ben and Ben is older than Carl. Who is the youngest?"),
    ("factual", "Who was the first president of the United States?"),
    ("factual", "What is the capital of Peru?"),
    ("writing", "Write a short poem about autumn leaves."),
    ("writing", "Draft an email to my team announcing the new office hours."),
    ("summarization", "Summarize this in one sentence: The museum will close for renovation from May to August, "
     "and during that time the collection will tour three other cities."),
    ("summarization", "TL;DR: The board approved the budget, delayed the hiring plan, and asked for a new forecast by June."),
    ("extraction", "Extract the names and email addresses from this text as JSON: Contact Maria at maria@shop.com "
     "or Leo at leo@shop.com."),
    ("extraction", "Extract all dates from this text: The audit starts on 3 March and the report is due on 30 April."),
    ("translation", "Translate to French: The weather is lovely today."),
    ("translation", "Translate this sentence into German: I will arrive tomorrow morning."),
    ("chat", "Hello! How are you doing today?"),
    ("chat", "Thanks a lot, you made my day!"),
]


V2_TASK_FLOOR = 0.94  # shipped 0.958 (aim 0.92)
V2_FAMILY_FLOOR = 0.85  # shipped weakest: writing 0.875 (aim: none below 0.85)
V2_COMPLEXITY_FLOOR = 0.82  # shipped 0.845 (aim 0.80)
V1_TASK_FLOOR = 0.96  # shipped 0.982
V1_COMPLEXITY_FLOOR = 0.75  # shipped 0.775


def _read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def test_classifier_examples_not_in_data_files():
    paths = (HELDOUT_PATH, HELDOUT_V2_PATH, make_data.OUT_PATH)
    users = {record["user"] for path in paths for record in _read_jsonl(path)}
    assert not users & {user for _, user in CLEAR_EXAMPLES}


@pytest.mark.parametrize(("task", "user"), CLEAR_EXAMPLES)
def test_classify_recognises_family(task, user):
    result = classify(system="", user=user)
    assert result.task == task


def test_classify_returns_known_labels():
    result = classify(system="You are helpful.", user="Explain how rainbows form.")
    assert isinstance(result, Classification)
    assert result.task in TASKS
    assert result.complexity in COMPLEXITIES
    assert 0.0 <= result.confidence <= 1.0


def test_classify_tools_offered_is_tool_use():
    result = classify(system="", user="What's the weather in Madrid tomorrow?", has_tools=True)
    assert result.task == "tool_use"
    assert result.complexity in COMPLEXITIES


def test_classify_million_character_prompt():
    user = "Please review the following log. " + "x" * 1_000_000 + " Summarize the errors."
    result = classify(system="", user=user)
    assert result.task in TASKS


def test_classification_key_depends_only_on_window():
    head, tail = "Translate into Spanish: " + "a" * 3_000, "b" * 1_000
    first = head + "c" * 1_000_000 + tail
    second = head + "d" * 1_000_000 + tail
    assert classification_key(system="", user=first, has_tools=False) == classification_key(
        system="", user=second, has_tools=False
    )
    assert classify(system="", user=first) == classify(system="", user=second)


def test_classification_key_is_deterministic():
    key = classification_key(system="sys", user="hello there", has_tools=False)
    assert key == classification_key(system="sys", user="hello there", has_tools=False)
    assert key != classification_key(system="sys", user="hello there", has_tools=True)
    assert key != classification_key(system="other", user="hello there", has_tools=False)
    # Processes share keys through Redis: another process, with other hash seeds, computes the same key.
    probe = ("from routing.classifier import classification_key; "
             "print(classification_key(system='sys', user='hello there', has_tools=False))")
    for seed in ("0", "12345"):
        other = subprocess.run([sys.executable, "-c", probe], cwd=Path(__file__).resolve().parents[2], check=True,
                               capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": seed}, timeout=60)
        assert other.stdout.strip() == key


def test_classification_key_changes_with_the_feature_version(monkeypatch: pytest.MonkeyPatch) -> None:
    # A classifier that reads its inputs differently must not be served the old one's cached classifications.
    from routing.classifier import core

    before = classification_key(system="sys", user="hello there", has_tools=False)
    monkeypatch.setattr(core, "FEATURE_VERSION", core.FEATURE_VERSION + "-next")
    assert classification_key(system="sys", user="hello there", has_tools=False) != before


def test_classification_key_ignores_system_beyond_window():
    base = "s" * 1_000
    assert classification_key(system=base + "x", user="hi", has_tools=False) == classification_key(
        system=base + "y", user="hi", has_tools=False
    )


def test_classifier_missing_weights_falls_back_to_heuristic(tmp_path):
    classifier = Classifier.from_path(tmp_path / "missing.npz")
    result = classifier.classify(system="", user="Translate to Spanish: good morning, everyone.")
    assert result.estimated is True
    assert result.task == "translation"
    assert result.complexity in COMPLEXITIES


def test_classifier_corrupt_weights_falls_back_to_heuristic(tmp_path):
    path = tmp_path / "weights.npz"
    path.write_bytes(b"not an npz file")
    result = Classifier.from_path(path).classify(system="", user="hi", has_tools=True)
    assert result.estimated is True
    assert result.task == "tool_use"


def test_classifier_shipped_weights_load():
    assert Classifier.from_path(WEIGHTS_PATH).model is not None


def test_classifier_heldout_accuracy_floor():
    # Floors sit a margin below the shipped figures (docs/classifier.md), so a regression fails here.
    classifier = Classifier.from_path(WEIGHTS_PATH)
    v2 = evaluation_run(_read_jsonl(HELDOUT_V2_PATH), classifier)
    assert v2["task_accuracy"] >= V2_TASK_FLOOR
    assert min(v2["per_family_accuracy"].values()) >= V2_FAMILY_FLOOR
    assert v2["complexity_accuracy"] >= V2_COMPLEXITY_FLOOR
    v1 = evaluation_run(_read_jsonl(HELDOUT_PATH), classifier)
    assert v1["task_accuracy"] >= V1_TASK_FLOOR
    assert v1["complexity_accuracy"] >= V1_COMPLEXITY_FLOOR


def test_cross_validation_figures_ship_with_the_weights():
    for path, by in ((CV_PATH, "prompt"), (CV_WRITER_PATH, "writer")):
        cv = json.loads(path.read_text(encoding="utf-8"))
        assert cv["feature_version"] == FEATURE_VERSION
        assert cv["by"] == by
        assert cv["scored"] > 5_000
        assert set(cv["per_family_accuracy"]) == set(TASKS) - {"tool_use"}


def test_evaluate_prints_both_heldout_sets_beside_cross_validation(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["evaluate"])
    evaluate_main()
    out = capsys.readouterr().out
    for heading in ("== held-out v2", "== held-out v1", "== cross-validation by prompt", "== cross-validation by writer"):
        assert heading in out
    assert "cv by prompt (k=4)" in out.split("== summary")[1] and "cv by writer (k=4)" in out.split("== summary")[1]
    assert out.count("task confusion") == 4 and out.count("complexity confusion") == 4


def test_make_data_skips_and_reports_broken_rows(tmp_path):
    (tmp_path / "v3" / "d1").mkdir(parents=True)
    (tmp_path / "v3" / "d1" / "chat_01.jsonl").write_text(
        '{"system": "", "user": "hey there", "task": "chat", "complexity": "easy", "lang": "en"}\n'
        '{"system": "", "user": "torn line", "task": "chat"\n'
        '{"system": "", "user": "what is 2+2", "task": "sums", "complexity": "easy", "lang": "en"}\n'
        '{"system": "", "user": "  ", "task": "chat", "complexity": "easy", "lang": "en"}\n',
        encoding="utf-8",
    )
    (tmp_path / "old.txt").write_text("hello without header\n@ maths easy\nwhat is 3+3\n", encoding="utf-8")
    rows, problems = make_data.hand_rows(tmp_path)
    assert [(row["user"], row["origin"]) for row in rows] == [("what is 3+3", "old.txt:3"), ("hey there", "v3/d1/chat_01.jsonl:1")]
    assert [problem.split(":")[0:2] for problem in problems] == [
        ["old.txt", "1"], ["v3/d1/chat_01.jsonl", "2"], ["v3/d1/chat_01.jsonl", "3"], ["v3/d1/chat_01.jsonl", "4"]
    ]


def _hand(writer: str, number: int) -> dict:
    origin = f"{writer}/chat_01.jsonl:{number}" if writer != "v1" else f"chat.txt:{number}"
    return {"user": f"{writer} prompt {number}", "task": "chat", "complexity": "easy", "source": "hand", "origin": origin}


def test_writer_folds_hold_out_whole_writers():
    from routing.classifier.train import writer_folds, writer_of

    sizes = {"v3/d1": 40, "v3/d2": 30, "v4/e1": 20, "v2/a": 12, "v1": 10}
    records = [_hand(writer, n) for writer, size in sizes.items() for n in range(size)]
    records += [{"user": f"template {n}", "task": "chat", "complexity": "easy", "source": "template"} for n in range(9)]
    folds = writer_folds(records, 3)
    by_writer: dict[str, set[int]] = {}
    for record, fold in zip(records, folds, strict=True):
        by_writer.setdefault(writer_of(record), set()).add(int(fold))
    assert all(len(found) == 1 for writer, found in by_writer.items() if writer != "template")
    assert {writer_of(record) for record in records} == {*sizes, "template"}
    # Largest first into the lightest fold: d1 (40); d2 (30) then v1 (40); e1 then a (20 + 12).
    assert by_writer["v3/d2"] == by_writer["v1"] and by_writer["v4/e1"] == by_writer["v2/a"]
    assert len({min(by_writer[w]) for w in ("v3/d1", "v3/d2", "v4/e1")}) == 3
    assert set(folds.tolist()) == {0, 1, 2}


def test_group_gains_are_trained_saved_and_scored(tmp_path):
    from routing.classifier.features import features_of, window_of
    from routing.classifier.linear import model_load, model_save
    from routing.classifier.train import model_train

    records = [
        {"user": f"translate into french: good morning number {n}", "task": "translation", "complexity": "easy"}
        for n in range(6)
    ] + [{"user": f"hello friend, how is day {n} going?", "task": "chat", "complexity": "easy"} for n in range(6)]
    model = model_train(records, epochs=2, task_gains=(1.0, 1.0, 4.0, 0.0, 3.0),
                        complexity_gains=(1.0, 2.0, 1.0, 1.0, 1.0))
    path = tmp_path / "weights.npz"
    model_save(model, path)
    loaded = model_load(path)
    assert (loaded.task_gains, loaded.complexity_gains) == ((1.0, 1.0, 4.0, 0.0, 3.0), (1.0, 2.0, 1.0, 1.0, 1.0))
    features = features_of(window_of(system="be brief", user="translate into french: good night"))
    for head in ("task", "complexity"):
        assert getattr(loaded.scores(features), head) == pytest.approx(getattr(model.scores(features), head), rel=1e-2)
    # Each head's gains are applied when scoring: the same weights score differently without them.
    plain = type(model)(model.buckets, model.dense, model.tasks, model.complexities, model.threshold, model.rule_weight)
    assert not np.allclose(plain.scores(features).task, model.scores(features).task)
    assert not np.allclose(plain.scores(features).complexity, model.scores(features).complexity)
    assert model.scores(features).task.argmax() == model.tasks.index("translation")


def test_weights_without_gains_load_with_unit_gains(tmp_path):
    from routing.classifier.linear import model_load, model_save

    model = Classifier.from_path(WEIGHTS_PATH).model
    path = tmp_path / "old.npz"
    model_save(model, path)
    with np.load(path) as data:
        arrays = {key: data[key] for key in data.files if not key.endswith("gains")}
    np.savez_compressed(path, **arrays)
    loaded = model_load(path)
    assert loaded.task_gains == loaded.complexity_gains == (1.0, 1.0, 1.0, 1.0, 1.0)


def test_weights_with_gains_for_other_feature_groups_are_refused(tmp_path):
    from routing.classifier.linear import WeightsError, model_load, model_save

    path = tmp_path / "odd.npz"
    model_save(Classifier.from_path(WEIGHTS_PATH).model, path)
    with np.load(path) as data:
        arrays = {key: data[key] for key in data.files}
    arrays["task_gains"] = arrays["task_gains"][:4]
    np.savez_compressed(path, **arrays)
    with pytest.raises(WeightsError, match="task_gains holds 4 gains for 5 feature groups"):
        model_load(path)
    assert Classifier.from_path(path).model is None  # refused, so the rules answer


def test_classification_key_changes_with_the_weights(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Classifications are cached across processes for a day: retrained weights must not be served the old ones'.
    from routing.classifier import core

    before = classification_key(system="sys", user="hello there", has_tools=False)
    retrained = tmp_path / "weights.npz"
    retrained.write_bytes(WEIGHTS_PATH.read_bytes() + b"\0")
    monkeypatch.setattr(core, "_WEIGHTS_TAG", core._weights_tag(retrained))
    assert classification_key(system="sys", user="hello there", has_tools=False) != before
    monkeypatch.setattr(core, "_WEIGHTS_TAG", core._weights_tag(WEIGHTS_PATH))
    assert classification_key(system="sys", user="hello there", has_tools=False) == before


@pytest.mark.parametrize(
    ("user", "ask"),
    [
        # The ask ends at a colon before material, at an opening quote, or at the end of the first line.
        ("Tiivistä tämä yhteen lauseeseen: Kaupunginhallitus päätti maanantaina", "Tiivistä tämä yhteen lauseeseen"),
        ('Translate «Guten Morgen» please', "Translate "),
        ("Fix this:\ndef f(x):\n    return x +", "Fix this\n    return x +"),
        # With several lines, the last line is the second segment: an ask written after pasted material.
        ("Hey team,\nthe deploy failed again.\n\ncan you turn this into a note for the CTO?\n",
         "Hey team,\ncan you turn this into a note for the CTO?"),
        ("hi there", "hi there"),
        ("", ""),
    ],
)
def test_ask_of_keeps_the_ask_and_cuts_off_the_material(user: str, ask: str) -> None:
    from routing.classifier.features import ask_of

    assert ask_of(user) == ask


def test_ask_of_reads_a_bounded_head_and_tail() -> None:
    from routing.classifier.features import ASK_CHARS, ask_of

    # At most ASK_CHARS from each end, and no last segment unless a line break falls within them.
    assert ask_of("a" * 10 * ASK_CHARS + "\n" + "b" * 10 * ASK_CHARS) == "a" * ASK_CHARS
    assert ask_of("a" * 10 * ASK_CHARS + "\nsummarise the above") == "a" * ASK_CHARS + "\nsummarise the above"


def test_each_hashed_group_has_its_gain() -> None:
    from routing.classifier.features import features_of, window_of
    from routing.classifier.linear import UNIT_GAINS

    features = features_of(window_of(system="be brief", user="Summarise this: the meeting moved to Friday."))
    assert len(features.hashed()) == len(UNIT_GAINS) == len(Classifier.from_path(WEIGHTS_PATH).model.task_gains)
    assert all(len(group) for group in features.hashed())


def test_cross_validation_can_keep_added_writers_in_training_only():
    # What added writers do for the others: their rows train every fold and are never scored, and the other
    # rows keep the folds they have without them.
    from routing.classifier.train import cross_validate, cv_folds, writer_folds

    families = (("translation", "translate into french: good morning"), ("chat", "hello friend, how is your day"))
    old = [_hand(writer, n) | {"user": f"{text} {writer} {n}", "task": task}
           for writer in ("v3/d1", "v3/d2", "v4/e1") for n, (task, text) in enumerate(families * 4)]
    added = [_hand("v7/g1", n) | {"user": f"{text} added {n}", "task": task} for n, (task, text) in enumerate(families * 6)]
    pinned = cross_validate(old + added, k=3, by="writer", train_only=("v7/",), epochs=1)
    alone = cross_validate(old, k=3, by="writer", epochs=1)
    assert pinned["scored"] == alone["scored"] == len(old)
    folds = cv_folds(old + added, 3, by="writer", train_only=("v7/",))
    assert folds[: len(old)].tolist() == writer_folds(old, 3).tolist() and set(folds[: len(old)].tolist()) == {0, 1, 2}
    assert set(folds[len(old) :].tolist()) == {-1}
    assert cv_folds(old + added, 3, by="prompt", train_only=("v7/", "v4/"))[len(old) - 1] == -1  # v4/e1's last row
    assert cross_validate(old + added, k=3, by="writer", epochs=1)["scored"] == len(old) + len(added)


def test_learning_rate_falls_linearly_to_the_last_step():
    from routing.classifier.train import LEARNING_RATE, learning_rate

    rates = [learning_rate(step, 8, decay=True) for step in range(1, 9)]
    assert rates[0] == LEARNING_RATE and rates[-1] == pytest.approx(LEARNING_RATE / 8)
    assert all(later < earlier for earlier, later in zip(rates[:-1], rates[1:], strict=True))
    assert {learning_rate(step, 8, decay=False) for step in range(1, 9)} == {LEARNING_RATE}
