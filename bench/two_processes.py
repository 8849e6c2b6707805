"""Scale-out on one host: throughput of one gateway process vs two sharing PostgreSQL and Redis.

Run: python -m bench.two_processes   (`make bench-scale`; needs PostgreSQL and Redis on 127.0.0.1)
Each gateway process is daphne on its own port (a load balancer would sit in front); both share the
database (logs, decisions) and Redis (snapshot version, classification and session caches, route health).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.live import start_extra_server, start_live_gateway, start_simulated, stop_live_gateway


def _load(url: str, key: str, concurrency: int, seconds: float, pid: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "bench.loadgen", "--url", f"{url}/chat/completions", "--key", key, "--model", "auto",
         "--concurrency", str(concurrency), "--duration", str(seconds), "--warmup", "1", "--pid", str(pid)],
        stdout=subprocess.PIPE, text=True)


def _result(proc: subprocess.Popen[str]) -> dict:
    out, _ = proc.communicate(timeout=300)
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args()
    os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")
    os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/0")
    tmp = Path(tempfile.mkdtemp(prefix="inferbase-scale-"))
    upstream = start_simulated(tmp)
    first = start_live_gateway(tmp, INFERBASE_SIMULATED_URL=upstream.url, INFERBASE_SIMULATED_MOUNT="false")
    second = start_extra_server(first, tmp, server="daphne")
    try:
        assert first.process is not None
        one = _result(_load(first.api, first.api_key, args.concurrency, args.seconds, first.process.pid))
        half = args.concurrency // 2
        a = _load(first.api, first.api_key, half, args.seconds, first.process.pid)
        b = _load(second.api, first.api_key, half, args.seconds, second.process.pid)
        both = [_result(a), _result(b)]
    finally:
        second.stop()
        stop_live_gateway(first)
        upstream.stop()
    total = sum(r["throughput_rps"] for r in both)
    print(f"one process,  c={args.concurrency}: {one['throughput_rps']} req/s, p50 {one['latency_ms']['p50']} ms, "
          f"CPU {one.get('target_cpu_ms_per_req')} ms/req, errors {one['errors']}")
    print(f"two processes, c={half}+{half}: {round(total, 1)} req/s "
          f"({' + '.join(str(r['throughput_rps']) for r in both)}), p50 "
          f"{' / '.join(str(r['latency_ms']['p50']) for r in both)} ms, errors {sum(r['errors'] for r in both)}")
    print(f"nproc {os.cpu_count()}: the load generator, the upstream and the gateways share these cores.")


if __name__ == "__main__":
    main()
