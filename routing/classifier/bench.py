"""Print p50/p99 classify latency for a short, an 8k-token and a 200k-token prompt.

Run: python -m routing.classifier.bench [--runs N]
"""

from __future__ import annotations

import argparse
import time

from routing.classifier.core import classify
from routing.classifier.linear import WEIGHTS_PATH

SYSTEM = "You are a careful assistant for an engineering team. Answer precisely and cite assumptions. " * 12
PARAGRAPH = (
    "The service reads events from the queue, validates each payload against the schema, enriches it with "
    "customer data from the cache, and writes the result to the warehouse in batches of five hundred rows. "
)
ASK = "\n\nGiven the design above, find the race condition and propose a fix with tests."


def prompt_of(tokens: int) -> str:
    """Return a prompt of roughly the given number of tokens (about four characters per token)."""
    body = PARAGRAPH * max(1, (tokens * 4) // len(PARAGRAPH))
    return body + ASK


def percentiles(samples: list[float]) -> tuple[float, float]:
    """Return the p50 and p99 of samples, in microseconds."""
    ordered = sorted(samples)
    return ordered[len(ordered) // 2] * 1e6, ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e6


def bench(user: str, runs: int, *, fresh_system: bool = False) -> tuple[float, float]:
    """Time classify on one prompt and return p50/p99 microseconds.

    With fresh_system every call gets a system prompt never seen before, defeating the system-feature cache.
    """
    systems = [f"{index} {SYSTEM}" if fresh_system else SYSTEM for index in range(runs + 1)]
    classify(system=systems[-1], user=user)
    samples = []
    for system in systems[:runs]:
        start = time.perf_counter()
        classify(system=system, user=user)
        samples.append(time.perf_counter() - start)
    return percentiles(samples)


def rss_mib() -> float:
    """Return this process's resident set size in MiB (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def main() -> None:
    """Print the latency table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    cases = {"short": "How do I reverse a list in Python?", "8k tokens": prompt_of(8_000), "200k tokens": prompt_of(200_000)}
    print(f"{'prompt':<12} {'chars':>9} {'p50 µs':>8} {'p99 µs':>8}")
    for name, user in cases.items():
        p50, p99 = bench(user, args.runs)
        print(f"{name:<12} {len(user):>9} {p50:>8.0f} {p99:>8.0f}")
    p50, p99 = bench(cases["8k tokens"], args.runs, fresh_system=True)
    print(f"{'8k, new sys':<12} {len(cases['8k tokens']):>9} {p50:>8.0f} {p99:>8.0f}   (system prompt not cached)")
    print(f"weights file {WEIGHTS_PATH.stat().st_size / 1e6:.2f} MB; process RSS {rss_mib():.0f} MiB after the runs")


if __name__ == "__main__":
    main()
