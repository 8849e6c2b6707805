"""What sampling and metrics add per request: the request path's share (timed in isolation) and the log
writer's share (per record, on SQLite, in the writer's thread, after the response).

    .venv/bin/python -m bench.evidence_cost
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
import time
import timeit
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def per_call_us(stmt, number: int = 200_000, repeat: int = 5) -> float:  # type: ignore[no-untyped-def]
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number * 1e6


def request_path() -> dict[str, float]:
    from inferbase.gateway.assemble import ChunkAssembler

    chunk = {"choices": [{"index": 0, "delta": {"content": "abcd"}, "finish_reason": None}]}
    stamped = ChunkAssembler()
    stamped.add(chunk)  # past the first token: what every later chunk pays is the one test

    def draws() -> None:  # RoutingRequest's two default factories
        time.time()
        random.random()

    def attempt_fields() -> None:  # two stamps and the attempt record's merge, once per served stream
        a = ChunkAssembler()
        a.first_token_at = a.first_answer_at = time.perf_counter()
        {"route": "r", "outcome": "served", "ms": 3} | a.first_tokens_ms(0.0)

    return {
        "draws_us": per_call_us(draws),
        "per_chunk_test_us": per_call_us(lambda: (True or False) and stamped.first_answer_at is None),
        "attempt_fields_us": per_call_us(attempt_fields, number=50_000),
    }


def writer(records_per_batch: int = 200, batches: int = 20) -> dict[str, float]:
    tmp = tempfile.mkdtemp()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inferbase.settings")
    os.environ["SQLITE_PATH"] = f"{tmp}/bench.sqlite3"
    os.environ["INFERBASE_CACHE_DIR"] = f"{tmp}/cache"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from inferbase.gateway.samples import route_samples_from
    from observability.metrics import metrics_observe
    from routing.services import route_samples_store

    def record(i: int) -> dict:
        return {"log": {"request_id": f"req-{i}", "created_at": time.time(), "model_served": "m", "route_served": "groq/m",
                        "stream": True, "final_disposition": "served", "status_code": 200, "prompt_tokens": 10,
                        "completion_tokens": 80, "cost_micros": 7, "latency_ms": 120, "ttft_ms": 30,
                        "finish_reason": "stop", "attempts": [{"route": "groq/m", "model": "m", "outcome": "served",
                                                               "ms": 110, "first_token_ms": 20,
                                                               "first_answer_token_ms": 20}]},
                "decision": {"classifier_task_family": "chat"}}

    batch = [record(i) for i in range(records_per_batch)]
    timings = {"extract": float("inf"), "store": float("inf"), "metrics": float("inf")}
    for _ in range(batches):
        t0 = time.perf_counter()
        rows = route_samples_from(batch)
        t1 = time.perf_counter()
        route_samples_store(rows)
        t2 = time.perf_counter()
        metrics_observe(batch, queued=0)
        t3 = time.perf_counter()
        timings["extract"] = min(timings["extract"], t1 - t0)  # the least disturbed batch of each
        timings["store"] = min(timings["store"], t2 - t1)
        timings["metrics"] = min(timings["metrics"], t3 - t2)
    return {f"{k}_us_per_record": v / records_per_batch * 1e6 for k, v in timings.items()}


if __name__ == "__main__":
    for name, value in {**request_path(), **writer()}.items():
        print(f"{name:28s} {value:8.2f}")
