"""A route's credential from the environment is read when the snapshot is built, never per request."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from inferbase.gateway.state import _snapshot_load
from routing.services import catalog_load

pytestmark = pytest.mark.django_db


def test_the_environment_credential_is_the_one_read_when_the_snapshot_was_built(monkeypatch: pytest.MonkeyPatch) -> None:
    catalog_load(catalog_path=Path(settings.INFERBASE_CATALOG_PATH), evidence_path=Path(settings.INFERBASE_EVIDENCE_PATH))
    monkeypatch.setenv("GROQ_API_KEY", "sk-at-build")
    snapshot = _snapshot_load("credentials")
    route = next(r for routes in snapshot.routes.values() for r in routes if r.provider == "groq")
    assert snapshot.credential_for(route, None) == ("sk-at-build", False)
    assert "sk-at-build" not in repr(route)  # never in a log line or a traceback
    monkeypatch.setenv("GROQ_API_KEY", "sk-changed-since")
    assert snapshot.credential_for(route, None) == ("sk-at-build", False)
    monkeypatch.delenv("GROQ_API_KEY")
    assert snapshot.credential_for(route, None) == ("sk-at-build", False)
    rebuilt = _snapshot_load("rebuilt")  # the next snapshot reads the environment again
    again = next(r for r in rebuilt.routes[route.model_id] if r.route_id == route.route_id)
    assert rebuilt.credential_for(again, None) is None


def test_a_route_without_its_credential_in_the_environment_has_none(monkeypatch: pytest.MonkeyPatch) -> None:
    catalog_load(catalog_path=Path(settings.INFERBASE_CATALOG_PATH), evidence_path=Path(settings.INFERBASE_EVIDENCE_PATH))
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    snapshot = _snapshot_load("credentials")
    route = next(r for routes in snapshot.routes.values() for r in routes if r.provider == "groq")
    assert not route.env_credential and snapshot.credential_for(route, None) is None
