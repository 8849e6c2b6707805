"""Requests while the database is stalled: throughput with the log writer's table locked vs not, and no record lost.

Run: python -m bench.db_stall   (`make bench-stall`; PostgreSQL with DATABASE_URL=..., Redis with REDIS_URL=...)
The gateway (daphne, its own database, pointed at the simulated upstream in its own process) serves a closed
loop of non-streamed requests in rounds: unlocked, then locked from another process (SQLite: an exclusive lock
on the file; PostgreSQL: `LOCK TABLE` on the request log), so that every write of the log writer waits. After
the last round the lock is gone and the bench waits until the database holds one log row per request sent.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

from tests.live import LiveGateway, database_locked, start_live_gateway, start_simulated, stop_live_gateway


def _load(gateway: LiveGateway, *, concurrency: int, seconds: float, model: str) -> dict:
    assert gateway.process is not None
    out = subprocess.run(
        [sys.executable, "-m", "bench.loadgen", "--url", f"{gateway.api}/chat/completions", "--key", gateway.api_key,
         "--model", model, "--concurrency", str(concurrency), "--duration", str(seconds), "--warmup", "0.5",
         "--pid", str(gateway.process.pid)],
        capture_output=True, text=True, check=True, timeout=600).stdout
    return json.loads(out.strip().splitlines()[-1])


def _line(name: str, result: dict) -> str:
    latency = result.get("latency_ms", {})
    return (f"{name:9} {result['throughput_rps']:8.1f} req/s  p50 {latency.get('p50', 0):7.1f} ms  "
            f"p99 {latency.get('p99', 0):8.1f} ms  errors {result['errors']}  sent {result['sent']}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.db_stall", description=__doc__)
    parser.add_argument("--concurrency", default="1,20", help="comma-separated client counts")
    parser.add_argument("--seconds", type=float, default=6.0, help="measured window per round")
    parser.add_argument("--rounds", type=int, default=2, help="pairs of (unlocked, locked) rounds per concurrency")
    parser.add_argument("--model", default="auto")
    args = parser.parse_args()
    concurrencies = [int(c) for c in args.concurrency.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="inferbase-stall-"))
    upstream = start_simulated(tmp)
    gateway = start_live_gateway(tmp, INFERBASE_SIMULATED_URL=upstream.url, INFERBASE_SIMULATED_MOUNT="false")
    database = "PostgreSQL" if gateway.env.get("DATABASE_URL") else "SQLite"
    results: dict[tuple[int, str], list[dict]] = {}
    started = time.monotonic()
    try:
        for concurrency in concurrencies:
            for _ in range(args.rounds):
                for phase in ("unlocked", "locked"):
                    with database_locked(gateway) if phase == "locked" else nullcontext():
                        result = _load(gateway, concurrency=concurrency, seconds=args.seconds, model=args.model)
                    results.setdefault((concurrency, phase), []).append(result)
                    print(f"c={concurrency:<3} " + _line(phase, result), flush=True)
        sent = sum(r["sent"] for rs in results.values() for r in rs)
        unlocked_at = time.monotonic()
        deadline = unlocked_at + 300
        counts = gateway.record_counts()
        while counts[0] < sent and time.monotonic() < deadline:
            time.sleep(0.5)
            counts = gateway.record_counts()
        caught_up_s = time.monotonic() - unlocked_at
        spool = Path(gateway.env["INFERBASE_SPOOL_DIR"])
        spool_left = sorted(p.name for p in spool.iterdir()) if spool.is_dir() else []
    finally:
        stop_live_gateway(gateway)
        upstream.stop()
    print(f"{database}{' + Redis' if os.environ.get('REDIS_URL') else ''}: {args.rounds} x ({args.seconds:g} s "
          f"unlocked, {args.seconds:g} s locked) per concurrency, model {args.model}, {time.monotonic() - started:.0f} s")
    for concurrency in concurrencies:
        rps = {phase: sum(r["throughput_rps"] for r in results[(concurrency, phase)]) / args.rounds
               for phase in ("unlocked", "locked")}
        p50 = {phase: sum(r.get("latency_ms", {}).get("p50", 0) for r in results[(concurrency, phase)]) / args.rounds
               for phase in ("unlocked", "locked")}
        ratio = rps["locked"] / rps["unlocked"] if rps["unlocked"] else 0.0
        print(f"c={concurrency}: unlocked {rps['unlocked']:.1f} req/s (p50 {p50['unlocked']:.1f} ms), locked "
              f"{rps['locked']:.1f} req/s (p50 {p50['locked']:.1f} ms): locked/unlocked {ratio:.2f} (aim >= 0.80)")
    # A request the client gave up on before its body arrived has a log and no decision (nothing was routed).
    print(f"requests sent {sent}; after unlocking, the database held {counts[0]} logs and {counts[1]} decisions "
          f"({caught_up_s:.1f} s to catch up); spool left: {spool_left or 'none'}")
    print(f"nproc {os.cpu_count()}: the load generator, the upstream and the gateway share these cores.")


if __name__ == "__main__":
    main()
