"""Benchmark feeds: the project's evidence JSON format, checked whole before anything is applied (pure).

A feed is a JSON object:

    {"version": "2026.11.30-1", "as_of": "2025-10",
     "sources": {"<key>": {"title": "<benchmark, version>", "url": "https://...", "as_of": "2025-09"}},
     "benchmarks": {"<catalog id>": {"<task or overall>": {"score": 0.71, "source": "<key>"}}}}

A score is a number in [0, 1]; written as a bare number, or an object without `source`, it is kept
but unverified. `routing/data/evidence.json` is such a feed (with the catalog's latency priors beside).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from .decision import TASKS

SCORE_KEYS = frozenset({"overall", *TASKS})
AS_OF = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")


@dataclass(frozen=True, slots=True)
class FeedScore:
    """One score of a feed, with its provenance (empty source fields: unverified)."""

    model_id: str
    task: str
    score: float
    source: str = ""
    source_title: str = ""
    source_url: str = ""
    as_of: str = ""

    @property
    def verified(self) -> bool:
        return bool(self.source_url)


@dataclass(frozen=True)
class FeedCheck:
    """The result of checking a feed: its scores when valid, else every error found (nothing to apply)."""

    version: str = ""
    as_of: str = ""
    scores: tuple[FeedScore, ...] = ()
    errors: tuple[str, ...] = ()
    skipped_models: tuple[str, ...] = field(default=())  # ids the catalog does not know: ignored

    @property
    def valid(self) -> bool:
        return not self.errors

    @property
    def unverified(self) -> int:
        return sum(1 for score in self.scores if not score.verified)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_sources(raw: Any, errors: list[str]) -> dict[str, dict[str, str]]:
    if not isinstance(raw, dict):
        errors.append("sources: must be an object of source keys")
        return {}
    sources = {}
    for key, source in raw.items():
        if not isinstance(source, dict):
            errors.append(f"sources.{key}: must be an object")
            continue
        title, url, as_of = source.get("title"), source.get("url"), source.get("as_of")
        if not isinstance(title, str) or not title.strip():
            errors.append(f"sources.{key}.title: the benchmark's name and version are required")
        if not isinstance(url, str) or not url.startswith(("https://", "http://")):
            errors.append(f"sources.{key}.url: an http(s) URL of the published figures (or the paper) is required")
        if not isinstance(as_of, str) or not AS_OF.match(as_of):
            errors.append(f"sources.{key}.as_of: YYYY-MM or YYYY-MM-DD is required")
        sources[key] = {"title": str(title or ""), "url": str(url or ""), "as_of": str(as_of or "")}
    return sources


def _check_score(model_id: str, task: str, raw: Any, sources: dict[str, dict[str, str]],
                 errors: list[str]) -> FeedScore | None:
    where = f"benchmarks.{model_id}.{task}"
    if task not in SCORE_KEYS:
        errors.append(f"{where}: unknown task (expected overall or one of {', '.join(TASKS)})")
        return None
    source_key = ""
    if isinstance(raw, dict):
        source_key = raw.get("source") or ""
        raw = raw.get("score")
    if not _number(raw) or not 0.0 <= float(raw) <= 1.0:
        errors.append(f"{where}: the score must be a number from 0 to 1")
        return None
    if not source_key:
        return FeedScore(model_id, task, float(raw))
    source = sources.get(source_key)
    if source is None:
        errors.append(f"{where}: source {source_key!r} is not in sources")
        return None
    return FeedScore(model_id, task, float(raw), source_key, source["title"], source["url"], source["as_of"])


def feed_check(data: Any, known_models: set[str] | frozenset[str]) -> FeedCheck:
    """Check a whole feed; return its scores for the models the catalog knows, or every error it has."""
    errors: list[str] = []
    if not isinstance(data, dict):
        return FeedCheck(errors=("the feed must be a JSON object",))
    version, as_of = data.get("version"), data.get("as_of")
    if not isinstance(version, str) or not version.strip():
        errors.append("version: a non-empty string is required")
    if not isinstance(as_of, str) or not AS_OF.match(as_of):
        errors.append("as_of: YYYY-MM or YYYY-MM-DD is required")
    sources = _check_sources(data.get("sources", {}), errors)
    benchmarks = data.get("benchmarks")
    if not isinstance(benchmarks, dict) or not benchmarks:
        errors.append("benchmarks: a non-empty object of catalog ids is required")
        benchmarks = {}
    scores: list[FeedScore] = []
    skipped: list[str] = []
    for model_id, cells in benchmarks.items():
        if not isinstance(cells, dict):
            errors.append(f"benchmarks.{model_id}: must be an object of tasks")
            continue
        if model_id not in known_models:
            skipped.append(model_id)
            continue
        for task, raw in cells.items():
            score = _check_score(model_id, task, raw, sources, errors)
            if score is not None:
                scores.append(score)
    if not errors and not scores:
        errors.append("benchmarks: no score for a model of the catalog")
    if errors:
        return FeedCheck(version=str(version or ""), as_of=str(as_of or ""), errors=tuple(errors),
                         skipped_models=tuple(skipped))
    return FeedCheck(version=str(version), as_of=str(as_of), scores=tuple(scores), skipped_models=tuple(skipped))
