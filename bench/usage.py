"""GET /usage over 10,000,000 requests' worth of rollups in PostgreSQL: p50 and p95 per query shape.

Run: DATABASE_URL=postgres://… python -m bench.usage [--iterations N] [--keep]   (make bench-usage; the portal's
`make bench-portal` can call it too). Creates its own database (`<name>_bench_usage` beside DATABASE_URL's),
migrates it, COPYs the rollups in, ANALYZEs, and times the real view in-process (Django's test client: URL
routing, API-key authentication, the selector's one query, JSON), then drops the database unless --keep.

Seeded: one large organization (10 projects × 4 keys × 8 of 25 models a day, 4,000,000 requests in a year:
116,800 rollup rows) and 2,000 small ones (3 models a day each, 6,000,000 requests: 2,190,000 rows).
The queries read the large organization (the worst case). Aim: p95 < 200 ms.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from datetime import date, timedelta
from urllib.parse import urlparse, urlunparse

LARGE_ORG = 1
SMALL_ORGS = 2_000
DAYS = 365
END = date(2026, 11, 30)
COLUMNS = ("day", "organization_id", "project_id", "api_key_id", "model", "requests", "prompt_tokens",
           "completion_tokens", "reasoning_tokens", "cost_micros")


def _rows():  # type: ignore[no-untyped-def]
    """Yield the rollup rows: exactly 10,000,000 requests in all."""
    start = END - timedelta(days=DAYS - 1)
    large_rows = DAYS * 10 * 4 * 8
    large_extra = 4_000_000 - large_rows * 34  # rows that get one request more
    small_rows = DAYS * SMALL_ORGS * 3
    small_extra = 6_000_000 - small_rows * 2
    index = 0
    for offset in range(DAYS):
        day = start + timedelta(days=offset)
        for project in range(10):
            for key in range(4):
                key_id = 1 + project * 4 + key
                for slot in range(8):
                    model = f"model-{(offset + key_id + slot * 3) % 25:02d}"
                    requests = 34 + (index < large_extra)
                    index += 1
                    yield (day, LARGE_ORG, 1 + project, key_id, model, requests, requests * 410, requests * 150,
                           requests * 20, requests * 310)
    index = 0
    for offset in range(DAYS):
        day = start + timedelta(days=offset)
        for org in range(SMALL_ORGS):
            for slot in range(3):
                requests = 2 + (index < small_extra)
                index += 1
                yield (day, 100 + org, 1_000 + org, 10_000 + org, f"model-{(org + slot) % 25:02d}", requests,
                       requests * 300, requests * 120, 0, requests * 150)
    assert (large_rows, small_rows) == (116_800, 2_190_000)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--keep", action="store_true", help="keep the bench database")
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if urlparse(url).scheme not in ("postgres", "postgresql"):
        raise SystemExit("bench.usage needs DATABASE_URL=postgres://… (it creates its own database beside it)")
    import psycopg

    parsed = urlparse(url)
    name = f"{parsed.path.lstrip('/') or 'postgres'}_bench_usage"
    admin = psycopg.connect(url, autocommit=True)
    admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
    admin.execute(f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = urlunparse(parsed._replace(path=f"/{name}"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inferbase.settings")
    try:
        _run(name, args.iterations)
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


def _run(name: str, iterations: int) -> None:
    import warnings

    import django

    warnings.filterwarnings("ignore", message="No directory at")  # no collected static files: not needed here

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from billing.models import UsageRollup
    from inferbase.accounts.models import Organization
    from inferbase.accounts.services import api_key_create

    call_command("migrate", verbosity=0)
    t0 = time.perf_counter()
    table = UsageRollup._meta.db_table
    with connection.cursor() as cursor:
        raw = cursor.connection
        with raw.cursor() as pg, pg.copy(f"COPY {table} ({', '.join(COLUMNS)}) FROM STDIN") as copy:
            for row in _rows():
                copy.write_row(row)
        cursor.execute(f"ANALYZE {table}")
        cursor.execute(f"SELECT count(*), sum(requests), pg_size_pretty(pg_total_relation_size('{table}')) FROM {table}")
        rows, requests, size = cursor.fetchone()
    seeded_s = time.perf_counter() - t0
    created = api_key_create(org_slug="large", project_name="default")
    org = created.api_key.project.organization
    # The rollups name the large organization by id 1: point the key's organization there.
    Organization.objects.filter(pk=org.pk).update(slug="large-org")
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET organization_id = %s WHERE organization_id = %s", [org.pk, LARGE_ORG])
        cursor.execute(f"ANALYZE {table}")
    client = Client(headers={"Authorization": f"Bearer {created.raw_key}"})
    year = f"from={(END - timedelta(days=DAYS - 1)).isoformat()}&to={END.isoformat()}"
    month = f"from={(END - timedelta(days=29)).isoformat()}&to={END.isoformat()}"
    shapes = {
        "year by day": year, "year by model": year + "&group_by=model", "year by project": year + "&group_by=project",
        "year by key": year + "&group_by=key", "30 days by day": month, "30 days by model": month + "&group_by=model",
    }
    print(f"Usage queries: {rows:,} rollup rows ({size}) for {requests:,} requests, seeded in {seeded_s:.1f} s; "
          f"database {name}; PostgreSQL {connection.pg_version // 10000}; Python {platform.python_version()}; "
          f"{iterations} runs each after 3 warm-ups; the large organization (116,800 rows in the year).")
    print("| query | rows in answer | p50 ms | p95 ms | max ms |")
    print("|---|---|---|---|---|")
    for label, query in shapes.items():
        for _ in range(3):
            client.get(f"/api/v1/inference/usage?{query}")
        times: list[float] = []
        answer = None
        for _ in range(iterations):
            start = time.perf_counter()
            response = client.get(f"/api/v1/inference/usage?{query}")
            times.append((time.perf_counter() - start) * 1000)
            answer = response.json()
            assert response.status_code == 200, answer
        assert answer is not None
        print(f"| {label} | {len(answer['data'])} | {_percentile(times, 0.5):.1f} | {_percentile(times, 0.95):.1f} | "
              f"{max(times):.1f} |")
        if label == "year by day":
            assert answer["totals"]["requests"] == 4_000_000, answer["totals"]


if __name__ == "__main__":
    main()
