"""Benchmark feeds: checked whole, applied with their sources, rejected without a change, kept in history."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache

from routing.feeds import feed_check
from routing.models import BenchmarkFeedLoad, BenchmarkScore
from routing.services import benchmark_feed_load, benchmark_feeds_refresh, catalog_load
from routing.snapshot import VERSION_KEY, snapshot_build
from tests.live import REPO

EXAMPLE = REPO / "routing" / "data" / "feeds" / "example.json"
SOURCES = {"lb": {"title": "LiveBench coding, 2025-11 release", "url": "https://livebench.ai/", "as_of": "2025-11"}}


def _feed(benchmarks: dict, **extra: object) -> dict:
    return {"version": "feed-1", "as_of": "2025-11", "sources": SOURCES, "benchmarks": benchmarks, **extra}


def test_a_good_feed_checks_with_its_provenance() -> None:
    check = feed_check(_feed({"m": {"coding": {"score": 0.8, "source": "lb"}, "chat": 0.5}}), {"m"})
    assert check.valid and check.version == "feed-1" and check.unverified == 1
    coding = next(s for s in check.scores if s.task == "coding")
    assert (coding.source_title, coding.source_url, coding.as_of, coding.verified) == (
        "LiveBench coding, 2025-11 release", "https://livebench.ai/", "2025-11", True)


def test_a_bad_feed_lists_every_error() -> None:
    check = feed_check({"version": "", "as_of": "last week",
                        "sources": {"x": {"title": "", "url": "ftp://x", "as_of": "2025"}},
                        "benchmarks": {"m": {"coding": 1.5, "cooking": 0.5, "chat": {"score": 0.5, "source": "nope"}}}},
                       {"m"})
    assert not check.valid and check.scores == ()
    assert set(check.errors) == {
        "version: a non-empty string is required", "as_of: YYYY-MM or YYYY-MM-DD is required",
        "sources.x.title: the benchmark's name and version are required",
        "sources.x.url: an http(s) URL of the published figures (or the paper) is required",
        "sources.x.as_of: YYYY-MM or YYYY-MM-DD is required",
        "benchmarks.m.coding: the score must be a number from 0 to 1",
        "benchmarks.m.cooking: unknown task (expected overall or one of coding, maths, reasoning, factual, "
        "writing, summarization, extraction, translation, chat, tool_use)",
        "benchmarks.m.chat: source 'nope' is not in sources"}


def test_models_the_catalog_does_not_know_are_skipped() -> None:
    check = feed_check(_feed({"m": {"coding": 0.5}, "elsewhere": {"coding": 0.9}}), {"m"})
    assert check.valid and check.skipped_models == ("elsewhere",) and len(check.scores) == 1


def test_the_shipped_evidence_is_a_valid_feed_with_every_score_sourced() -> None:
    data = json.loads(Path(settings.INFERBASE_EVIDENCE_PATH).read_text())
    check = feed_check(data, set(data["benchmarks"]))
    assert check.valid, check.errors
    assert check.unverified == 0 and all(s.source_url and s.as_of for s in check.scores)


@pytest.fixture
def catalog(db: None) -> None:
    catalog_load(catalog_path=Path(settings.INFERBASE_CATALOG_PATH), evidence_path=Path(settings.INFERBASE_EVIDENCE_PATH))


def _score(model: str, task: str) -> BenchmarkScore:
    return BenchmarkScore.objects.get(model__catalog_id=model, task=task)


@pytest.mark.django_db(transaction=True)
def test_a_good_feed_is_applied_kept_in_history_and_bumps_the_snapshot(catalog: None, tmp_path: Path) -> None:
    path = tmp_path / "feed.json"
    path.write_text(json.dumps(_feed({"meta-llama-3.3-70b": {"coding": {"score": 0.41, "source": "lb"}}})))
    before = cache.get(VERSION_KEY)
    load = benchmark_feed_load(feed=str(path))
    assert load is not None and load.applied and load.version == "feed-1" and load.scores == 1
    score = _score("meta-llama-3.3-70b", "coding")
    assert (score.score, score.source_url, score.as_of, score.feed_version) == (0.41, "https://livebench.ai/",
                                                                                 "2025-11", "feed-1")
    assert cache.get(VERSION_KEY) != before
    assert snapshot_build("v").models["meta-llama-3.3-70b"].benchmarks["coding"] == 0.41
    assert benchmark_feed_load(feed=str(path)) is None  # the same version again: nothing to do


@pytest.mark.django_db(transaction=True)
def test_a_bad_feed_changes_nothing_and_is_reported(catalog: None, tmp_path: Path,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "feed.json"
    path.write_text(json.dumps(_feed({"meta-llama-3.3-70b": {"coding": {"score": 0.41, "source": "lb"},
                                                             "chat": 7}})))
    before_score = _score("meta-llama-3.3-70b", "coding").score
    before = cache.get(VERSION_KEY)
    load = benchmark_feed_load(feed=str(path))
    assert load is not None and not load.applied
    assert load.errors == ["benchmarks.meta-llama-3.3-70b.chat: the score must be a number from 0 to 1"]
    assert _score("meta-llama-3.3-70b", "coding").score == before_score  # the good cell was not applied either
    assert cache.get(VERSION_KEY) == before
    assert "benchmark feed" in caplog.text and "rejected" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_an_unreadable_feed_is_reported(catalog: None, tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{not json")
    load = benchmark_feed_load(feed=str(tmp_path / "broken.json"))
    assert load is not None and not load.applied and load.errors[0].startswith("JSONDecodeError")


@pytest.mark.django_db(transaction=True)
def test_a_partial_feed_replaces_its_cells_and_leaves_the_others(catalog: None, tmp_path: Path) -> None:
    untouched = _score("meta-llama-3.3-70b", "chat").score
    load = benchmark_feed_load(feed="partial", data=_feed({"meta-llama-3.3-70b": {"coding": 0.5}}))
    assert load is not None and load.applied and load.unverified == 1
    coding = _score("meta-llama-3.3-70b", "coding")
    assert coding.score == 0.5 and not coding.verified
    assert _score("meta-llama-3.3-70b", "chat").score == untouched and _score("meta-llama-3.3-70b", "chat").verified
    assert snapshot_build("v").models["meta-llama-3.3-70b"].unverified == frozenset({"coding"})


@pytest.mark.django_db(transaction=True)
def test_the_refresh_loads_the_configured_feeds_in_order(catalog: None, settings: object) -> None:
    settings.INFERBASE_BENCHMARK_FEEDS = [str(EXAMPLE)]  # type: ignore[attr-defined]
    loads = benchmark_feeds_refresh()
    assert [(load.feed, load.applied) for load in loads] == [(str(EXAMPLE), True)]
    assert BenchmarkFeedLoad.objects.get().version == "example-2026.11.30-1"
    assert not _score("meta-llama-3.1-8b", "overall").verified


@pytest.fixture
def feed_server() -> Iterator[tuple[str, dict[str, bytes]]]:
    """A local HTTP server answering GET /<name> with the bytes put in its dict, 404 otherwise."""
    served: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            body = served.get(self.path.lstrip("/"))
            self.send_response(404 if body is None else 200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body or b'{"error": "not found"}')

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's signature)
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", served
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.mark.django_db(transaction=True)
def test_a_feed_served_over_http_is_applied_and_a_failing_url_is_reported(
        catalog: None, feed_server: tuple[str, dict[str, bytes]]) -> None:
    base, served = feed_server
    served["feed.json"] = json.dumps(_feed({"meta-llama-3.3-70b": {"coding": {"score": 0.43, "source": "lb"}}},
                                           version="http-feed-1")).encode()
    before = cache.get(VERSION_KEY)
    load = benchmark_feed_load(feed=f"{base}/feed.json")
    assert load is not None and load.applied and load.version == "http-feed-1"
    assert _score("meta-llama-3.3-70b", "coding").score == 0.43
    assert cache.get(VERSION_KEY) != before

    version = cache.get(VERSION_KEY)
    missing = benchmark_feed_load(feed=f"{base}/gone.json")
    assert missing is not None and not missing.applied
    assert missing.errors[0].startswith("HTTPStatusError") and "404" in missing.errors[0]
    assert _score("meta-llama-3.3-70b", "coding").score == 0.43 and cache.get(VERSION_KEY) == version
