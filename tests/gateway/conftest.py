"""The gateway tests' application state: upstreams answered by an httpx.MockTransport, no Redis."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from django.test import override_settings

from inferbase.gateway.decisions import SharedDecisions
from inferbase.gateway.shared import RouteHealth, SharedRedis
from inferbase.gateway.state import AppState
from providers.http import UpstreamClients
from tests.gateway.upstreams import Upstreams


@pytest.fixture
def state(tmp_path: Path) -> Callable[[Upstreams], AppState]:
    def build(upstreams: Upstreams, *, threshold: int = 1000) -> AppState:
        with override_settings(REDIS_URL=""):  # caches, counters and limits in this process
            base = AppState.from_settings()
        return dataclasses.replace(
            base,
            upstream=UpstreamClients(transport=httpx.MockTransport(upstreams)),
            route_health=RouteHealth(threshold=threshold, rest_seconds=60),
            decisions=SharedDecisions(SharedRedis("", "test"), tmp_path / "decisions", 60),
        )

    return build
