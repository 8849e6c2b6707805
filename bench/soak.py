"""Memory under sustained load: RSS of the gateway process after each slice of load, up to 50,000 requests.

Run: python -m bench.soak [--requests 50000] [--concurrency 50]   (`make bench-soak`)
The gateway (daphne, its own SQLite database) and the simulated upstream run in their own processes;
the load generator (`bench.loadgen`) runs in its own process for each slice of requests.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.loadgen import memory_kib
from tests.live import start_live_gateway, start_simulated, stop_live_gateway


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=50_000)
    parser.add_argument("--slice-seconds", type=float, default=15.0, help="load per RSS sample")
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="inferbase-soak-"))
    upstream = start_simulated(tmp)
    gateway = start_live_gateway(tmp, INFERBASE_SIMULATED_URL=upstream.url, INFERBASE_SIMULATED_MOUNT="false")
    assert gateway.process is not None
    pid = gateway.process.pid
    samples = [{"requests": 0, **{k: v // 1024 for k, v in memory_kib(pid).items()}}]
    done = 0
    started = time.monotonic()
    try:
        while done < args.requests:
            out = subprocess.run(
                [sys.executable, "-m", "bench.loadgen", "--url", f"{gateway.api}/chat/completions",
                 "--key", gateway.api_key, "--model", "auto", "--concurrency", str(args.concurrency),
                 "--duration", str(args.slice_seconds), "--warmup", "0", "--grace", "10"],
                capture_output=True, text=True, check=True,
            )
            result = json.loads(out.stdout.strip().splitlines()[-1])
            done += int(result["requests"])
            sample = {"requests": done, "errors": result.get("errors", 0),
                      **{k: v // 1024 for k, v in memory_kib(pid).items()}}
            samples.append(sample)
            print(f"{done:>7} requests  RSS {sample['VmRSS']:>4} MiB  peak {sample['VmHWM']:>4} MiB  "
                  f"errors {sample['errors']}", flush=True)
    finally:
        stop_live_gateway(gateway)
        upstream.stop()
    warm = samples[2]["VmRSS"] if len(samples) > 2 else samples[-1]["VmRSS"]
    print(f"RSS after warm-up ({samples[min(2, len(samples) - 1)]['requests']} requests): {warm} MiB; "
          f"after {done}: {samples[-1]['VmRSS']} MiB; peak {samples[-1]['VmHWM']} MiB; "
          f"{time.monotonic() - started:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(samples, indent=2))


if __name__ == "__main__":
    main()
