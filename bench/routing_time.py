"""routing_time_ms as the gateway reports it (token count + classification + decision), by prompt size.

Run: python -m bench.routing_time [--iterations N]   (part of `make bench`)
Builds the real shipped catalog into a throwaway SQLite database, then times the gateway's own
`route_request` in-process: no network, no database on the timed path.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
from pathlib import Path


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _prompt(chars: int, seed: int) -> str:
    rng = random.Random(seed)
    words = ("the model routes each request to a provider with latency cost and quality in mind while "
             "def sort_items(values): return sorted(values) explain why the derivative of x squared is 2x").split()
    text = []
    size = 0
    while size < chars:
        word = rng.choice(words)
        text.append(word)
        size += len(word) + 1
    return " ".join(text)[:chars]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="inferbase-routing-bench-")
    os.environ.update({"SQLITE_PATH": f"{tmp}/bench.sqlite3", "INFERBASE_CACHE_DIR": f"{tmp}/cache",
                       "DJANGO_SETTINGS_MODULE": "inferbase.settings"})
    os.environ.pop("DATABASE_URL", None)
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("load_catalog", verbosity=0, stdout=open(os.devnull, "w"))  # noqa: SIM115
    from inferbase.accounts.selectors import KeyInfo
    from inferbase.api.validation import chat_request_parse
    from inferbase.gateway.exchange import Exchange
    from inferbase.gateway.route import route_request
    from inferbase.gateway.state import AppState, _snapshot_load

    snapshot = _snapshot_load("bench")
    state = AppState.from_settings()
    key = KeyInfo(key_id=1, project_id=1, organization_id=1, plan="pro", markup_bps=500, policy_id=None, active=True)
    sizes = {"short (~40 tokens)": 160, "8k tokens": 32_000, "200k tokens": 800_000}
    results: dict[str, dict[str, float]] = {}
    for label, chars in sizes.items():
        base = _prompt(chars, seed=chars)
        for mode in ("uncached", "cached"):
            times = []
            for i in range(args.iterations):
                # Uncached: a different last user turn each time, so the classification cache misses.
                user = base if mode == "cached" else f"{i} {base}"
                chat = chat_request_parse({"model": "auto", "messages": [
                    {"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": user}]})
                ex = Exchange(request_id="req-bench", key=key, chat=chat)
                route_request(state, ex, snapshot)
                times.append(ex.routed.routing["routing_time_ms"])
            warm = times[len(times) // 10:]
            results[f"{label}, {mode}"] = {"p50_ms": round(statistics.median(warm), 3),
                                           "p99_ms": round(_percentile(warm, 0.99), 3),
                                           "mean_ms": round(statistics.fmean(warm), 3)}
    print(f"routing_time_ms (count + classify + decide), {args.iterations} iterations each, catalog "
          f"{len(snapshot.models)} models")
    print(f"{'prompt':32} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8}")
    for label, row in results.items():
        print(f"{label:32} {row['p50_ms']:>8} {row['p99_ms']:>8} {row['mean_ms']:>8}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
