"""What rendering the live tail's rows costs the log writer: `rendered_rows` (the `log_row` partial per stored
request, as `live_tail_publish` renders it for a watched organization), in CPU per row, by batch size.

    .venv/bin/python -m bench.live_tail_cost

On its own SQLite file in a temporary directory (one organization, project and key)."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    sys.path.insert(0, str(REPO))
    tmp = Path(tempfile.mkdtemp(prefix="inferbase-tail-"))
    os.environ["SQLITE_PATH"] = str(tmp / "tail.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inferbase.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from inferbase.accounts.services import api_key_create
    from inferbase.portal import live

    key = api_key_create(org_slug="tail-bench", project_name="default", name="bench").api_key

    def log(i: int) -> dict:
        return {"request_id": f"req-{i:016x}", "organization_id": key.project.organization_id,
                "project_id": key.project_id, "api_key_id": key.pk, "created_at": time.time(), "status_code": 200,
                "final_disposition": "served", "model_requested": "meta-llama-3.3-70b",
                "model_served": "meta-llama-3.3-70b", "stream": False, "latency_ms": 5, "prompt_tokens": 10,
                "completion_tokens": 80, "cost_micros": 12, "task": "chat", "complexity": "standard"}

    logs = [log(i) for i in range(live.MAX_ROWS_PER_ORGANIZATION)]
    live.rendered_rows(logs)  # templates loaded, names cached
    for n in (1, 10, live.MAX_ROWS_PER_ORGANIZATION):
        best = float("inf")
        for _ in range(5):
            reps = max(3, 200 // n)
            t0 = time.process_time()
            for _ in range(reps):
                live.rendered_rows(logs[:n])
            best = min(best, (time.process_time() - t0) / reps / n)
        print(f"batch of {n:3d}: {best * 1e6:6.0f} µs CPU per row (least disturbed of 5)")


if __name__ == "__main__":
    main()
