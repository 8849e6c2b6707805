"""What the recorder stores, composed here: logs and decisions, and the keys' last use."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from django.db import transaction

from billing.services import usage_rollup_add
from inferbase.accounts.models import ApiKey
from observability.services import records_store

# A key's last use is kept to the minute: one UPDATE per key per minute, not one per request.
LAST_USED_RESOLUTION_S = 60.0
_last_written: dict[int, float] = {}


def records_and_key_use_store(records: list[dict[str, Any]]) -> None:
    """Persist a batch of records and add the logs stored now to the usage rollups, in one transaction (a replayed
    batch counts nothing twice, a failed one nothing at all); then mark the last use of the keys not marked
    this minute."""
    with transaction.atomic():
        usage_rollup_add(records_store(records))
    last_used: dict[int, float] = {}
    for record in records:
        key_id = record["log"].get("api_key_id")
        if key_id is not None:
            last_used[key_id] = max(last_used.get(key_id, 0.0), float(record["log"]["created_at"]))
    now = time.monotonic()
    for key_id, at in last_used.items():
        if now - _last_written.get(key_id, -LAST_USED_RESOLUTION_S) < LAST_USED_RESOLUTION_S:
            continue
        ApiKey.objects.filter(pk=key_id).update(last_used_at=datetime.fromtimestamp(at, tz=UTC))
        _last_written[key_id] = now
