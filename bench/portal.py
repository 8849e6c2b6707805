"""Logs at scale: seed 1,000,000 logged requests in PostgreSQL (once), then time the portal's pages.

Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/portal_bench python -m bench.portal [--rows N]
(`make bench-portal`). The rows go to one organization (plus a tenth as many to a neighbour, so every
query has another organization's rows to skip); a second run finds them and skips the seeding. Each page
is requested in-process through Django's test client (middleware, session, queries, template), so the
times are the server's own, without a network. Results: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

ORG = "portal-bench"
NEIGHBOUR = "portal-bench-neighbour"
PROJECTS = ("web", "batch", "mobile", "internal", "eval")
KEYS_PER_ORG = 40
HISTORY = timedelta(days=30)
DECISION_EVERY = 50  # every 50th request of the organization gets a full routing decision row
TASKS = {"chat": 25, "coding": 20, "writing": 12, "factual": 10, "summarization": 8, "extraction": 7,
         "reasoning": 6, "maths": 5, "translation": 5, "tool_use": 2}
COMPLEXITIES = {"easy": 50, "standard": 35, "hard": 15}
# (disposition, status, served): how requests end, by share in ten thousand.
ENDINGS = {("served", 200, True): 9650, ("rejected", 400, False): 120, ("rejected", 422, False): 40,
           ("not_routed", 400, False): 40, ("upstream_error", 502, False): 60, ("upstream_timeout", 504, False): 40,
           ("upstream_unavailable", 503, False): 20, ("failed_mid_stream", 200, True): 20,
           ("client_disconnected", 200, True): 10}
LOG_COLUMNS = (
    "request_id", "organization_id", "project_id", "api_key_id", "created_at", "model_requested", "model_served",
    "route_served", "stream", "status_code", "final_disposition", "error_code", "finish_reason", "prompt_tokens",
    "completion_tokens", "reasoning_tokens", "cost_micros", "latency_ms", "ttft_ms", "attempts", "dropped_params",
    "client_disconnected", "task", "complexity", "thinking", "cached_tokens", "structured_output_repair", "requested",
    "cost_breakdown", "guardrails",
)
DECISION_COLUMNS = (
    "request_id", "organization_id", "created_at", "routing_mode", "classifier_task_family", "complexity_band",
    "eligibility_pool_size", "final_disposition", "decisiveness", "forced_single", "chain_attempted", "route_displays",
    "filter_trail", "filter_trail_text", "routing", "attempts",
)


def _setup() -> None:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        sys.exit("bench.portal needs DATABASE_URL=postgres://... (e.g. postgres://postgres@127.0.0.1:5432/portal_bench)")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inferbase.settings")
    warnings.filterwarnings("ignore", message="No directory at")  # WhiteNoise: no collected static files here
    import django

    django.setup()


def _weighted(rng: random.Random, table: dict[Any, int]) -> Callable[[], Any]:
    values, weights = list(table), list(itertools.accumulate(table.values()))
    total = weights[-1]

    def pick() -> Any:
        return values[_bisect(weights, rng.random() * total)]

    return pick


def _bisect(cumulative: list[int], x: float) -> int:
    import bisect

    return bisect.bisect_right(cumulative, x)


def _accounts(slug: str) -> tuple[int, list[int], list[tuple[int, int]]]:
    """Return the organization id, its project ids and its (key id, project id) pairs, creating them."""
    import uuid

    from inferbase.accounts.models import ApiKey, Organization, Project

    org, _ = Organization.objects.get_or_create(slug=slug, defaults={"name": slug.replace("-", " ").title()})
    projects = [Project.objects.get_or_create(organization=org, name=name)[0] for name in PROJECTS]
    keys = list(ApiKey.objects.filter(project__organization=org).values_list("id", "project_id"))
    for n in range(len(keys), KEYS_PER_ORG):
        project = projects[n % len(projects)] if n % 3 else projects[0]  # "web" holds the most keys
        key = ApiKey.objects.create(project=project, name=f"{project.name}-key-{n}", prefix=f"inf_b{n:07d}",
                                    key_hash=uuid.uuid4().hex + uuid.uuid4().hex)
        keys.append((key.pk, project.pk))
    return org.pk, [p.pk for p in projects], keys


def _log_rows(rng: random.Random, *, org_id: int, keys: list[tuple[int, int]], models: list[str], count: int,
              start: datetime, tag: int) -> Iterator[tuple[tuple[Any, ...], tuple[Any, ...] | None]]:
    """Yield (log row, decision row or None) for `count` requests spread evenly over HISTORY from `start`."""
    task, complexity = _weighted(rng, TASKS), _weighted(rng, COMPLEXITIES)
    ending = _weighted(rng, ENDINGS)
    model = _weighted(rng, {m: max(1, 1000 // (i + 1)) for i, m in enumerate(models)})  # a few models take most
    key_weights = {k: max(1, 400 // (i + 1)) for i, k in enumerate(keys)}
    key_of = _weighted(rng, key_weights)
    step = HISTORY / count
    for n in range(count):
        created = start + step * n + timedelta(microseconds=rng.randrange(1000))
        key_id, project_id = key_of()
        disposition, status, served = ending()
        served_model = model() if served else ""
        stream = rng.random() < 0.4
        roll = rng.random()
        thinking = "on" if roll < 0.3 else "off" if roll < 0.95 else ""
        prompt = rng.randrange(20, 4000)
        completion = rng.randrange(10, 1500) if served else 0
        reasoning = rng.randrange(100, 2000) if served and thinking == "on" else 0
        latency = rng.randrange(80, 20000)
        route = f"simulated/{served_model}" if served else ""
        attempts = json.dumps([{"route": route, "model": served_model, "outcome": "served", "ms": latency - 5}]
                              if served else [])
        request_id = f"req-{tag:02x}{n:06x}{rng.getrandbits(32):08x}"
        t, c = task(), complexity()
        log = (request_id, org_id, project_id, key_id, created, "auto" if rng.random() < 0.85 else served_model or "auto",
               served_model, route, stream, status, disposition, "" if served else disposition, "stop" if served else "",
               prompt, completion + reasoning, reasoning if served else None, (prompt + 4 * (completion + reasoning)) // 3,
               latency, rng.randrange(60, 900) if stream and served else None, attempts, "[]", False, t, c, thinking,
               rng.choice((0, 0, 0, prompt // 2)) if served else None, None,
               '{"routing": {"optimize": "cost"}}' if rng.random() < 0.1 else "{}", "{}", "[]")
        decision = None
        if n % DECISION_EVERY == 0 and served:
            decision = _decision_row(request_id, org_id, created, t, c, disposition, served_model, models, attempts)
        yield log, decision


def _decision_row(request_id: str, org_id: int, created: datetime, task: str, complexity: str, disposition: str,
                  served: str, models: list[str], attempts: str) -> tuple[Any, ...]:
    chain = [served, *[m for m in models[:3] if m != served]][:3]
    routing = {
        "task": task, "complexity": complexity, "estimated": False, "decisiveness": 0.31, "decisiveness_basis": "lead",
        "forced_single": False, "model": served, "measured": True, "proxied": False, "optimize_mode": "balanced",
        "thinking": "off", "thinking_reason": "easy_prompt", "expected_wait_ms": 1200, "wait_basis": "end_to_end",
        "reasoning": f"Best balance of quality, cost and wait among 14 eligible models ({served} leads)",
        "alternatives": [{"model": m, "rank": i + 1, "quality": 0.6, "expected_cost_micros": 100 + i,
                          "expected_wait_ms": 1200, "utility": 0.5} for i, m in enumerate(chain)],
        "policy": {"name": "bench", "source": "organization", "rules": ["objective: balanced"], "ignored": []},
        "routing_time_ms": 1.4,
    }
    trail = [{"step": "pool_loaded", "in": 26, "out": 26}, {"step": "servable", "in": 26, "out": 26},
             {"step": "context_fit", "in": 26, "out": 24},
             {"step": "preset_eligibility", "in": 24, "out": 14, "preset": "standard"},
             {"step": "chain", "in": 14, "out": len(chain)}]
    text = ["26 models in the pool.", "26 of 26 models have a servable route.", "24 of 26 models fit the request's length.",
            "14 of 24 models meet the standard quality floor for this task.",
            f"{len(chain)} models in the final chain: the pick, then its fallbacks."]
    return (request_id, org_id, created, "balanced", task, complexity, 26, disposition, 0.31, False,
            json.dumps([f"simulated/{m}" for m in chain]), json.dumps({f"simulated/{m}": m for m in chain}),
            json.dumps(trail), json.dumps(text), json.dumps(routing), attempts)


def _seed(rows: int) -> None:
    """Seed the organization with `rows` requests and its neighbour with a tenth as many, unless already there."""
    from django.db import connection, transaction

    from observability.models import RequestLog, RoutingDecision
    from routing.models import Model

    models = list(Model.objects.order_by("catalog_id").values_list("catalog_id", flat=True))
    rng = random.Random(12)
    start = datetime.now(UTC) - HISTORY
    for tag, (slug, count) in enumerate(((ORG, rows), (NEIGHBOUR, max(1, rows // 10))), start=1):
        org_id, _, keys = _accounts(slug)
        have = RequestLog.objects.filter(organization_id=org_id).count()
        decided = RoutingDecision.objects.filter(organization_id=org_id).count()
        if have == count and decided >= count // DECISION_EVERY // 2:
            print(f"{slug}: {have:,} logged requests already there; not seeding", flush=True)
            continue
        # A different size, or an interrupted seeding: start again.
        RequestLog.objects.filter(organization_id=org_id)._raw_delete(connection.alias)
        RoutingDecision.objects.filter(organization_id=org_id)._raw_delete(connection.alias)
        t0 = time.perf_counter()
        # In one transaction, so that an interrupted seeding leaves nothing behind.
        with transaction.atomic(), connection.cursor() as cursor:
            raw = cursor.connection  # psycopg's own connection, for COPY
            with raw.cursor() as pg, \
                    pg.copy(f"COPY observability_requestlog ({', '.join(LOG_COLUMNS)}) FROM STDIN") as logs_copy:
                decisions = []
                for n, (log, decision) in enumerate(_log_rows(rng, org_id=org_id, keys=keys, models=models,
                                                             count=count, start=start, tag=tag), start=1):
                    logs_copy.write_row(log)
                    if decision is not None:
                        decisions.append(decision)
                    if n % 200_000 == 0:
                        print(f"{slug}: {n:,} of {count:,} rows sent ({time.perf_counter() - t0:.0f} s)", flush=True)
            with raw.cursor() as pg, \
                    pg.copy(f"COPY observability_routingdecision ({', '.join(DECISION_COLUMNS)}) FROM STDIN") as copy:
                for decision in decisions:
                    copy.write_row(decision)
        print(f"{slug}: {count:,} requests and {len(decisions):,} decisions seeded in "
              f"{time.perf_counter() - t0:.0f} s", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE observability_requestlog")
        cursor.execute("VACUUM ANALYZE observability_routingdecision")


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _measure(client: Any, paths: Iterator[str], samples: int, *, first_byte: bool = False) -> dict[str, float]:
    times = []
    for n in range(samples + 2):
        path = next(paths)
        t0 = time.perf_counter()
        response = client.get(path)
        if first_byte:
            next(iter(response.streaming_content))
        else:
            _ = response.content
        elapsed = (time.perf_counter() - t0) * 1000
        if response.status_code != 200:
            raise RuntimeError(f"{path}: HTTP {response.status_code}")
        if first_byte:
            response.close()
        if n >= 2:  # the first two warm the caches
            times.append(elapsed)
    return {"p50": statistics.median(times), "p95": _percentile(times, 0.95), "max": max(times)}


def _cases(org_id: int) -> list[tuple[str, Iterator[str], bool]]:
    from django.db import connection

    from inferbase.accounts.selectors import api_key_labels, project_names
    from observability.keyset import Cursor
    from observability.models import RequestLog, RoutingDecision

    logs = RequestLog.objects.filter(organization_id=org_id)
    projects = list(project_names(organization_id=org_id))
    keys = list(api_key_labels(organization_id=org_id))
    served = list(logs.exclude(model_served="").values_list("model_served", flat=True).distinct())
    with connection.cursor() as cursor:  # a sample of ids without ORDER BY random() over a million rows
        cursor.execute("SELECT request_id FROM observability_requestlog TABLESAMPLE SYSTEM (0.1) "
                       "WHERE organization_id = %s LIMIT 200", [org_id])
        ids = [row[0] for row in cursor.fetchall()]
    decided = list(RoutingDecision.objects.filter(organization_id=org_id).values_list("request_id", flat=True)[:200])
    total = logs.count()
    cursors = []
    for depth in (total // 10, total // 2, total * 9 // 10):
        created, row_id = logs.order_by("-created_at", "-id").values_list("created_at", "id")[depth]
        cursors.append(Cursor(created, row_id).encode())
    newest = logs.order_by("-created_at").values_list("created_at", flat=True).first()
    windows = [(newest - timedelta(days=d, hours=1), newest - timedelta(days=d)) for d in (1, 7, 15, 29)]
    fmt = "%Y-%m-%dT%H:%M"

    def cycle(values: list[str]) -> Iterator[str]:
        return itertools.cycle(values)

    base = "/portal/logs/"
    return [
        ("list, no filter (first page)", cycle([base]), False),
        ("time range (one hour, 1-29 days back)",
         cycle([f"{base}?since={a.strftime(fmt)}&until={b.strftime(fmt)}" for a, b in windows]), False),
        ("project", cycle([f"{base}?project={p}" for p in projects]), False),
        ("key (40 keys, skewed)", cycle([f"{base}?key={k}" for k in keys]), False),
        (f"served model ({len(served)} models, skewed)", cycle([f"{base}?model={m}" for m in served]), False),
        ("task", cycle([f"{base}?task={t}" for t in TASKS]), False),
        ("complexity", cycle([f"{base}?complexity={c}" for c in COMPLEXITIES]), False),
        ("disposition (down to 0.1%)", cycle([f"{base}?disposition={d}" for d in sorted({e[0] for e in ENDINGS})]), False),
        ("status", cycle([f"{base}?status={s}" for s in (200, 400, 422, 502, 503, 504)]), False),
        ("streamed", cycle([f"{base}?streamed=true", f"{base}?streamed=false"]), False),
        ("thinking", cycle([f"{base}?thinking=on", f"{base}?thinking=off"]), False),
        ("search: a whole request id", cycle([f"{base}?q={i}" for i in ids]), False),
        ("search: a request id's first 8 characters", cycle([f"{base}?q={i[:12]}" for i in ids]), False),
        ("keyset page at depth 10% / 50% / 90%", cycle([f"{base}?after={c}" for c in cursors]), False),
        ("detail page (decision)", cycle([f"{base}{i}/" for i in decided]), False),
        ("CSV export, time to first byte (500 rows)", cycle(["/portal/logs.csv", "/portal/logs.csv?task=coding",
                                                            "/portal/logs.csv?disposition=upstream_timeout"]), True),
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="logged requests of the measured organization")
    parser.add_argument("--samples", type=int, default=40, help="requests timed per case")
    parser.add_argument("--json", default="", help="also write the results to this file")
    args = parser.parse_args(argv)
    _setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client

    from inferbase.accounts.models import Membership, Organization
    from routing.models import Model

    call_command("migrate", verbosity=0, interactive=False)
    if not Model.objects.exists():
        call_command("load_catalog", verbosity=0)
    _seed(args.rows)
    org = Organization.objects.get(slug=ORG)
    user, _ = User.objects.get_or_create(username="portal-bench-analyst")
    Membership.objects.get_or_create(user=user, defaults={"organization": org, "role": "analyst"})
    client = Client()
    client.force_login(user)
    results = []
    print(f"\n| Page ({args.rows:,} requests) | p50 ms | p95 ms | max ms |\n|---|---:|---:|---:|")
    for name, paths, first_byte in _cases(org.pk):
        figures = _measure(client, paths, args.samples, first_byte=first_byte)
        results.append({"case": name, **{k: round(v, 1) for k, v in figures.items()}})
        print(f"| {name} | {figures['p50']:.1f} | {figures['p95']:.1f} | {figures['max']:.1f} |", flush=True)
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"rows": args.rows, "samples": args.samples, "results": results}, out, indent=1)


if __name__ == "__main__":
    main()
