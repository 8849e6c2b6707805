"""The dry-run of an edited policy: the organization's logged requests replayed through the routing engine
(routing.replay, pure) on a snapshot built for the occasion; no upstream is called and nothing is saved."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django import forms

from inferbase.accounts.selectors import default_policy_maps, organization_cost_multiplier, provider_secrets
from observability.selectors import replay_rows
from routing.replay import ReplayResult, policy_replay
from routing.snapshot import PolicySnap, snapshot_build

DEFAULT_REQUESTS = 500
MAX_REQUESTS = 5000
SHOWN_ROWS = 50  # requests listed one by one, changed first (the counts cover them all)


class DryRunForm(forms.Form):
    """Which logged requests to replay: the last N, or those of a time range (its newest N)."""

    dry_run_requests = forms.IntegerField(min_value=1, max_value=MAX_REQUESTS, initial=DEFAULT_REQUESTS,
                                          required=False, label="Last N requests")
    dry_run_since = forms.DateTimeField(required=False, label="From (UTC)",
                                        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))
    dry_run_until = forms.DateTimeField(required=False, label="To (UTC)",
                                        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        since, until = data.get("dry_run_since"), data.get("dry_run_until")
        if since is not None and until is not None and since >= until:
            self.add_error("dry_run_until", "The end of the range must come after its start.")
        return data


@dataclass(frozen=True)
class DryRun:
    """What the page shows: the totals, the changes by model, and the requests side by side (changed first)."""

    result: ReplayResult
    requests: int
    changes: list[dict[str, Any]]  # {"then", "now", "count"}, model names
    rows: list[dict[str, Any]]  # at most SHOWN_ROWS requests, then and now

    @property
    def cost_difference_micros(self) -> int:
        return self.result.cost_difference_micros


def dry_run(*, organization_id: int, policy: PolicySnap, limit: int, since: datetime | None = None,
            until: datetime | None = None) -> DryRun:
    """Replay the organization's latest `limit` logged requests (within since..until) under `policy`."""
    project_policy, organization_policy = default_policy_maps()
    snapshot = snapshot_build("dry-run", project_policy=project_policy, organization_policy=organization_policy,
                              provider_keys=provider_secrets(organization_id=organization_id))
    rows = replay_rows(organization_id=organization_id, limit=limit, since=since, until=until)
    result = policy_replay(rows, policy, snapshot, now=time.time(),
                           cost_multiplier=organization_cost_multiplier(organization_id=organization_id))
    names = {model_id: model.name for model_id, model in snapshot.models.items()}

    def name(model_id: str | None) -> str:
        if not model_id or model_id == "—":
            return "not routed"
        return names.get(model_id, model_id)

    ordered = sorted(result.outcomes, key=lambda o: not o.changed)[:SHOWN_ROWS]
    return DryRun(
        result=result,
        requests=len(rows),
        changes=[{"then": name(then), "now": name(now), "count": count}
                 for then, now, count in result.changes_by_model],
        rows=[{"request_id": o.row.request_id, "task": o.row.task, "changed": o.changed,
               "then": name(o.row.then_model), "then_id": o.row.then_model or "",
               "then_cost": o.row.then_cost_micros, "then_wait": o.row.then_wait_ms,
               "now": name(o.now_model), "now_id": o.now_model or "", "now_cost": o.now_cost_micros,
               "now_wait": o.now_wait_ms, "error": o.now_error} for o in ordered],
    )
