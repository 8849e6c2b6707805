"""Guardrail checks on 8k-token prompts: p50 and p99 per check, wall time and the thread's own CPU time.

Run: python -m bench.guardrails [--iterations N] [--json PATH]   (part of `make bench`)
Prompts: the project's own docs (English prose, code and tables) and the classifier's held-out prompts
(21 languages), each cut to exactly 8,000 cl100k tokens, with a few findings planted (an email, a card,
a phone number, an API key). Each check runs alone, as `texts_check` runs it on a request; the streamed
output guard is timed over the same text sent in 16-character deltas. A reference row times the PII check with
every pattern scanned over the whole text (no gates: how it ran before billing/guardrails/gates.py), side by side
on the same machine at the same moment. Aim: p99 <= 1 ms per check.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import random
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from billing.guardrails import StreamGuard, guardrail_config_parse, guardrails_compile, texts_check
from routing.tokens import encoding

REPO = Path(__file__).resolve().parents[1]
TOKENS = 8_000
PLANTED = ("write to jane.doe@example.com", "card 4111 1111 1111 1111", "call +44 20 7946 0958",
           "key sk-proj-Ab3dEf6hIj9kLm2oPq5sTu8wXy1zAb3dEf6h", "IBAN GB82 WEST 1234 5698 7654 32")


def _cut(text: str, seed: int) -> str:
    enc = encoding()
    base = enc.decode(enc.encode_ordinary(text)[:TOKENS])
    rng = random.Random(seed)
    for finding in PLANTED:
        at = rng.randrange(len(base))
        at = base.rfind(" ", 0, at) + 1
        base = f"{base[:at]}{finding} {base[at:]}"
    return base


def prompts() -> dict[str, str]:
    docs = "\n\n".join(p.read_text() for p in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))])
    heldout = [orjson.loads(line) for line in (REPO / "routing/classifier/data/heldout_v2.jsonl").read_bytes().splitlines() if line]
    multilingual = "\n\n".join(str(row.get("prompt") or row.get("user") or row.get("text") or "") for row in heldout)
    return {"docs (English)": _cut(docs * 3, 1), "held-out (21 languages)": _cut(multilingual * 3, 2)}


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _time(fn: Callable[[], object], iterations: int) -> dict[str, float]:
    for _ in range(5):
        fn()
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(iterations):
        c0, w0 = time.thread_time_ns(), time.perf_counter_ns()
        fn()
        wall.append((time.perf_counter_ns() - w0) / 1e6)
        cpu.append((time.thread_time_ns() - c0) / 1e6)
    return {"wall_p50_ms": _percentile(wall, 0.5), "wall_p99_ms": _percentile(wall, 0.99),
            "cpu_p50_ms": _percentile(cpu, 0.5), "cpu_p99_ms": _percentile(cpu, 0.99)}


CHECKS = {
    "pii": {"input": [{"check": "pii", "action": "redact"}]},
    "secrets": {"input": [{"check": "secrets", "action": "redact"}]},
    "blocklist (100 phrases)": {"input": [{"check": "blocklist", "action": "redact"}],
                                "blocklist": [f"codename{i} project" for i in range(99)] + ["acme merger"]},
    "blocklist (1,000 phrases)": {"input": [{"check": "blocklist", "action": "redact"}],
                                  "blocklist": [f"codename{i} project" for i in range(999)] + ["acme merger"]},
}


def run(iterations: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for prompt_name, text in prompts().items():
        for check_name, config in CHECKS.items():
            checks = guardrails_compile(guardrail_config_parse(config)).input
            result = _time(lambda checks=checks, text=text: texts_check([text], checks), iterations)
            rows.append({"prompt": prompt_name, "check": check_name, "mode": "whole text", **result})
            if check_name == "pii":  # the same check with each pattern over the whole text (the scan before gates.py)
                plain = (dataclasses.replace(checks[0], detectors=tuple(
                    dataclasses.replace(d, lead="") for d in checks[0].detectors)),)
                result = _time(lambda plain=plain, text=text: texts_check([text], plain), iterations)
                rows.append({"prompt": prompt_name, "check": "pii, pattern by pattern (reference)",
                             "mode": "whole text", **result})
        output = guardrails_compile(guardrail_config_parse(
            {"output": [{"check": "pii", "action": "redact"}, {"check": "secrets", "action": "redact"}]})).output
        deltas = [text[i:i + 16] for i in range(0, len(text), 16)]

        def streamed(output=output, deltas=deltas) -> None:  # type: ignore[no-untyped-def]
            guard = StreamGuard(output)
            for delta in deltas:
                guard.feed(delta)
            guard.finish()

        result = _time(streamed, max(10, iterations // 20))
        rows.append({"prompt": prompt_name, "check": f"pii + secrets, streamed ({len(deltas)} deltas)",
                     "mode": "whole answer", **result})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rows = run(args.iterations)
    print(f"Guardrail checks, {TOKENS:,}-token prompts, {args.iterations} runs each "
          f"(Python {platform.python_version()}; aim p99 <= 1 ms per check)")
    print("| prompt | check | wall p50 ms | wall p99 ms | CPU p50 ms | CPU p99 ms |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['prompt']} | {row['check']} | {row['wall_p50_ms']:.3f} | {row['wall_p99_ms']:.3f} | "
              f"{row['cpu_p50_ms']:.3f} | {row['cpu_p99_ms']:.3f} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
