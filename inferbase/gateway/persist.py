"""What the recorder stores, composed here: logs and decisions, and the keys' last use."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from inferbase.accounts.models import ApiKey
from observability.services import records_store


def records_and_key_use_store(records: list[dict[str, Any]]) -> None:
    """Persist a batch of records, then mark each key's last use (one UPDATE per key in the batch)."""
    records_store(records)
    last_used: dict[int, float] = {}
    for record in records:
        key_id = record["log"].get("api_key_id")
        if key_id is not None:
            last_used[key_id] = max(last_used.get(key_id, 0.0), float(record["log"]["created_at"]))
    for key_id, at in last_used.items():
        ApiKey.objects.filter(pk=key_id).update(last_used_at=datetime.fromtimestamp(at, tz=UTC))
