"""Route samples from log records: what each attempt says about its route's latency and failures.

Read by the log writer from the records it stores (off the request path): the request path adds
nothing but the first-token times of a streamed attempt, which the chunk assembler stamps.
"""

from __future__ import annotations

from typing import Any

from .pipeline import ROUTE_FAILURES

SERVED = frozenset({"served", "served_truncated"})


def sample_outcome(outcome: str) -> str | None:
    """Return what an attempt's outcome says about its route: served, truncated, error or timeout; None
    when it says nothing (a request refused as malformed, a deadline that left no time to try)."""
    if outcome == "served":
        return "served"
    if outcome in ("served_truncated", "no_content_before_limit"):
        return "truncated"
    if "timeout" in outcome:
        return "timeout"
    if outcome in ROUTE_FAILURES or outcome.startswith("http_5"):
        return "error"
    return None


def route_samples_from(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return one sample row per attempt that tells about its route (see `sample_outcome`)."""
    rows: list[dict[str, Any]] = []
    for record in records:
        log = record["log"]
        attempts = log.get("attempts") or ()
        served_at = max((i for i, a in enumerate(attempts) if a.get("outcome") in SERVED), default=None)
        for index, attempt in enumerate(attempts):
            kind = sample_outcome(str(attempt.get("outcome", "")))
            if kind is None or not attempt.get("route"):
                continue
            row = {
                "route_id": attempt["route"],
                "created_at": log["created_at"],
                "outcome": kind,
                "stream": bool(log.get("stream")),
                "end_to_end_ms": max(0, int(attempt.get("ms") or 0)),
                "first_token_ms": attempt.get("first_token_ms"),
                "first_answer_token_ms": attempt.get("first_answer_token_ms"),
                "output_tokens": None,
            }
            if index == served_at:
                row["output_tokens"] = int(log.get("completion_tokens") or 0)
                if kind == "served" and log.get("finish_reason") == "length":
                    row["outcome"] = "truncated"
            rows.append(row)
    return rows
