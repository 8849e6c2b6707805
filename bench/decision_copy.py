"""What copying a decision to the shared cache costs a response: `shared_decisions.put`, measured in-process.

Run: python -m bench.decision_copy   (files under a temporary cache directory; Redis too when REDIS_URL is set)
A real decision (GET /routing-decisions of a request served by a live gateway) is copied N times one after
another, then N times 50 at a time; per copy: wall time awaited by the response and CPU of this process.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

import httpx
import orjson

from tests.live import start_live_gateway, stop_live_gateway


def _decision(tmp: Path) -> dict:
    gateway = start_live_gateway(tmp)
    try:
        headers = {"Authorization": f"Bearer {gateway.api_key}"}
        body = httpx.post(f"{gateway.api}/chat/completions", headers=headers, timeout=30,
                          json={"model": "auto", "messages": [{"role": "user", "content": "Sort a list in Python"}]}).json()
        deadline = time.monotonic() + 30
        while (response := httpx.get(f"{gateway.api}/routing-decisions/{body['id']}", headers=headers)).status_code != 200:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        return response.json()
    finally:
        stop_live_gateway(gateway)


async def _measure(decision: dict, n: int, concurrency: int) -> tuple[float, float, float]:
    """Return (median wall ms per awaited copy, p99 wall ms, CPU ms per copy)."""
    from inferbase.gateway.state import AppState

    shared_decisions = AppState.from_settings().decisions

    walls: list[float] = []

    async def one(i: int) -> None:
        request_id = f"req-{i:016x}"
        t0 = time.perf_counter()
        await shared_decisions.put(request_id, 1, {**decision, "request_id": request_id})
        walls.append(time.perf_counter() - t0)

    cpu0 = time.process_time()
    for start in range(0, n, concurrency):
        await asyncio.gather(*(one(i) for i in range(start, min(start + concurrency, n))))
    cpu = time.process_time() - cpu0
    shared_decisions.forget([f"req-{i:016x}" for i in range(n)])
    walls.sort()
    return statistics.median(walls) * 1000, walls[int(len(walls) * 0.99)] * 1000, cpu * 1000 / n


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.decision_copy", description=__doc__)
    parser.add_argument("-n", type=int, default=2000)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="inferbase-copy-"))
    decision = _decision(tmp)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inferbase.settings")
    os.environ["INFERBASE_CACHE_DIR"] = str(tmp / "cache")
    os.environ.setdefault("INFERBASE_CACHE_PREFIX", "bench-copy")
    import django

    django.setup()
    from django.conf import settings

    backend = f"Redis ({settings.REDIS_URL})" if settings.REDIS_URL else f"files ({tmp / 'cache' / 'decisions'})"
    print(f"decision: {len(orjson.dumps(decision))} bytes of JSON; backend: {backend}")
    for concurrency in (1, 50):
        median, p99, cpu = asyncio.run(_measure(decision, args.n, concurrency))
        print(f"{args.n} copies, {concurrency} at a time: awaited {median:.3f} ms median, {p99:.3f} ms p99; "
              f"CPU {cpu:.3f} ms per copy")


if __name__ == "__main__":
    main()
