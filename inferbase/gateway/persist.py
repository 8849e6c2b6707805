"""What the recorder stores, composed here: logs and decisions, the keys' last use, and the routes' samples."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from django.db import transaction

from billing.services import usage_rollup_add
from inferbase.accounts.models import ApiKey
from inferbase.portal.live import live_tail_publish
from observability.metrics import metrics_observe
from observability.services import records_store
from routing.services import route_samples_store

from .decisions import SharedDecisions
from .pending import PendingUsage
from .samples import route_samples_from

# A key's last use is kept to the minute: one UPDATE per key per minute, not one per request.
LAST_USED_RESOLUTION_S = 60.0
# Past this many keys, the ones not marked within the minute are forgotten (they would be written anyway),
# so the map holds at most the keys used in the last minute.
LAST_WRITTEN_PRUNE_AT = 10_000


class RecordStore:
    """The recorder's store: logs and decisions, the usage rollups, the routes' samples and the keys' last use.
    Called in the log writer's thread only (which alone touches its memory of keys marked)."""

    def __init__(self, decisions: SharedDecisions, usage_pending: PendingUsage | None = None, *,
                 prune_at: int = LAST_WRITTEN_PRUNE_AT, route_samples: bool = True, live_tail: bool = True) -> None:
        self._decisions = decisions
        self._usage_pending = usage_pending
        self._prune_at = prune_at
        self._route_samples = route_samples  # INFERBASE_ROUTE_SAMPLES
        self._live_tail = live_tail  # INFERBASE_LIVE_TAIL
        self.last_written: dict[int, float] = {}  # key id -> when its last use was written (monotonic)
        self.queued: Callable[[], int] = lambda: 0  # records the recorder holds, for the metrics (set when wired)

    def __call__(self, records: list[dict[str, Any]]) -> None:
        """Persist a batch of records and its route samples, adding the logs stored now to the usage rollups in
        the same transaction (a replayed batch counts nothing twice, a failed one nothing at all); then, committed,
        delete their entries from Usage's pending set and the shared copies of their decisions (the rows now
        answer), publish their rows to the portal's live tail (unless INFERBASE_LIVE_TAIL is off), count it in
        the metrics, then mark the last use of the keys not marked this minute. The route samples of the logs
        stored now (unless INFERBASE_ROUTE_SAMPLES is off) go in the same transaction as the logs."""
        with transaction.atomic():
            stored = records_store(records)
            usage_rollup_add(stored)
            if self._route_samples:  # the samples of the logs stored now: a replayed batch adds none twice
                route_samples_store(route_samples_from(records if len(stored) == len(records)
                                                       else _of(records, stored)))
        if self._usage_pending is not None:
            self._usage_pending.forget(record["log"] for record in records)
        if self._live_tail:
            live_tail_publish(stored)  # hands the rows to the event loop; never waits
        self._decisions.forget([record["decision"]["request_id"] for record in records if record.get("decision")])
        self._key_use_mark(records)
        # Counted once the whole batch is stored: a batch retried after a failed write is counted when it lands.
        metrics_observe(records, queued=self.queued() - len(records))

    def _key_use_mark(self, records: list[dict[str, Any]]) -> None:
        last_used: dict[int, float] = {}
        for record in records:
            key_id = record["log"].get("api_key_id")
            if key_id is not None:
                last_used[key_id] = max(last_used.get(key_id, 0.0), float(record["log"]["created_at"]))
        now = time.monotonic()
        written = self.last_written
        for key_id, at in last_used.items():
            if now - written.get(key_id, -LAST_USED_RESOLUTION_S) < LAST_USED_RESOLUTION_S:
                continue
            ApiKey.objects.filter(pk=key_id).update(last_used_at=datetime.fromtimestamp(at, tz=UTC))
            written[key_id] = now
        if len(written) > self._prune_at:
            for key_id in [k for k, at in written.items() if now - at >= LAST_USED_RESOLUTION_S]:
                del written[key_id]


def _of(records: list[dict[str, Any]], stored: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the records whose logs are among those stored."""
    ids = {log["request_id"] for log in stored}
    return [record for record in records if record["log"]["request_id"] in ids]
