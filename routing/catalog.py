"""Reads over the snapshot for the catalog endpoints (pure)."""

from __future__ import annotations

from typing import Any

from .engine.filters import in_policy_pool
from .snapshot import PolicySnap, RouteSnap, Snapshot


def model_servable_routes(snapshot: Snapshot, model_id: str, project_id: int | None = None) -> list[tuple[RouteSnap, str | None]]:
    """Return the model's routes that have a credential, with it; real routes before simulated ones."""
    out = []
    for route in snapshot.routes.get(model_id, ()):
        credential = snapshot.credential_for(route, project_id)
        if credential is not None:
            out.append((route, credential[0]))
    out.sort(key=lambda pair: pair[0].simulated)
    return out


def model_list(snapshot: Snapshot, *, policy: PolicySnap | None, project_id: int | None) -> list[dict[str, Any]]:
    """Return the OpenAI model-list entries: servable catalog models, then those served by the project's own keys."""
    # A key whose policy requires pinned models to be in its pool lists only those (as routing admits them).
    narrowing = policy if policy is not None and policy.require_pinned_in_pool and policy.pool else None
    public: list[dict[str, Any]] = []
    own: list[dict[str, Any]] = []
    for model_id in sorted(snapshot.models):
        model = snapshot.models[model_id]
        if narrowing is not None and not in_policy_pool(model, narrowing):
            continue
        public_routes = [r for r in snapshot.routes.get(model_id, ()) if snapshot.credential_for(r, None) is not None]
        entry = {"id": model_id, "object": "model", "created": model.created, "owned_by": "inferbase", "name": model.name}
        if any(r.simulated for r in public_routes) and all(r.simulated for r in public_routes):
            entry["simulated"] = True
        if public_routes:
            public.append(entry)
        elif project_id is not None and model_servable_routes(snapshot, model_id, project_id):
            own.append({**entry, "owned_by": "project"})
    return public + own
