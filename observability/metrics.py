"""Prometheus metrics, counted by the log writer from the records it stores (never on the request path).

With PROMETHEUS_MULTIPROC_DIR set (before any process starts, an empty directory), every gateway
process writes its counters there and `GET /metrics` on any of them adds up all; without it the
process reports its own. Label values are bounded: catalog model ids, provider slugs, task families,
dispositions, stream; never request ids, keys or what a client typed.
"""

from __future__ import annotations

import os
from typing import Any

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.multiprocess import mark_process_dead

LABELS = ("model", "provider", "task", "disposition", "stream")
TIMING_LABELS = ("model", "provider", "stream")

REQUESTS = Counter("inferbase_requests", "Requests that reached the gateway.", LABELS)
ERRORS = Counter("inferbase_errors", "Requests answered with an error (status 400 and up, or an error event).", LABELS)
FALLBACKS = Counter("inferbase_fallbacks", "Attempts that failed over to the next route of the chain.", LABELS)
TOKENS = Counter("inferbase_tokens", "Tokens billed, by kind (prompt, completion).", (*LABELS, "kind"))
COST = Counter("inferbase_cost_micros", "What requests cost the organizations, in micro-dollars.", LABELS)
LATENCY = Histogram("inferbase_request_latency_seconds", "Time from arrival to the end of the answer.", TIMING_LABELS,
                    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600))
TTFT = Histogram("inferbase_ttft_seconds", "Time from arrival to the first token of a streamed answer.",
                 TIMING_LABELS, buckets=(0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60))
QUEUE_DEPTH = Gauge("inferbase_log_queue_depth", "Records waiting for the log writer, as of its last write.",
                    multiprocess_mode="livesum")


def _labels(record: dict[str, Any]) -> tuple[str, ...]:
    log = record["log"]
    decision = record.get("decision") or {}
    route = log.get("route_served") or ""
    return (log.get("model_served") or "", route.split("/", 1)[0] if route else "",
            decision.get("classifier_task_family") or "", log.get("final_disposition") or "",
            "true" if log.get("stream") else "false")


# The labelled children of each metric, kept per label set (bounded, as the label values are): looking a
# child up by its labels cost more than counting.
_children: dict[tuple[Any, ...], Any] = {}


def _child(metric: Any, labels: tuple[str, ...]) -> Any:
    key = (metric, labels)
    child = _children.get(key)
    if child is None:
        child = _children[key] = metric.labels(*labels)
    return child


def metrics_observe(records: list[dict[str, Any]], *, queued: int | None = None) -> None:
    """Count a stored batch of records; `queued` is what still waits for the writer. The counters are added
    up over the batch and incremented once per label set (each increment takes a lock, and in multiprocess
    mode writes a file); the histograms observe every record."""
    counts: dict[tuple[Any, tuple[str, ...]], int] = {}
    for record in records:
        log = record["log"]
        labels = _labels(record)
        key = (REQUESTS, labels)
        counts[key] = counts.get(key, 0) + 1
        if int(log.get("status_code") or 0) >= 400 or log.get("error_code"):
            key = (ERRORS, labels)
            counts[key] = counts.get(key, 0) + 1
        failed_over = max(0, len(log.get("attempts") or ()) - 1)
        if failed_over:
            key = (FALLBACKS, labels)
            counts[key] = counts.get(key, 0) + failed_over
        for kind in ("prompt", "completion"):
            tokens = int(log.get(f"{kind}_tokens") or 0)
            if tokens:
                key = (TOKENS, (*labels, kind))
                counts[key] = counts.get(key, 0) + tokens
        if log.get("cost_micros"):
            key = (COST, labels)
            counts[key] = counts.get(key, 0) + int(log["cost_micros"])
        timing = (labels[0], labels[1], labels[4])
        if log.get("latency_ms") is not None:
            _child(LATENCY, timing).observe(int(log["latency_ms"]) / 1000)
        if log.get("ttft_ms") is not None:
            _child(TTFT, timing).observe(int(log["ttft_ms"]) / 1000)
    for (metric, labels), amount in counts.items():
        _child(metric, labels).inc(amount)
    if queued is not None:
        QUEUE_DEPTH.set(max(0, queued))


def metrics_process_exit(directory: str) -> None:
    """Forget this process's live gauges in the multiprocess directory (when one is set), as it stops: the
    `livesum` queue depth must not go on counting a process that is gone. Its counters and histograms stay, so
    the totals keep what it served. Called by the server's shutdown (inferbase.asgi); a process killed outright
    cannot call it, so a supervisor that restarts single processes calls `mark_process_dead(pid)` itself
    (gunicorn's `child_exit` hook), and the directory is emptied before the processes start."""
    if directory:
        mark_process_dead(os.getpid(), directory)
