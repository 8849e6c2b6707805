"""Shared fixtures: the live gateway (daphne + its own database + the mounted simulated upstream)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.live import LiveGateway, start_live_gateway, start_simulated, stop_live_gateway


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker) -> Iterator[None]:  # type: ignore[no-untyped-def]
    """pytest-django's test database; at the end of the session, on PostgreSQL, the connections that other
    threads of this process still hold to it are ended before it is dropped.

    In-process tests run the log writer's thread (one per Recorder) and asgiref's executor threads, which keep
    their connections for CONN_MAX_AGE as in production; the test teardown closes only its own thread's, and
    DROP DATABASE then fails with "being accessed by other users"."""
    yield
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND pid <> pg_backend_pid()")


@pytest.fixture(scope="session")
def simulated_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The simulated upstream in its own process (uvicorn), instant answers."""
    upstream = start_simulated(Path(tmp_path_factory.mktemp("sim")))
    try:
        yield upstream.url
    finally:
        upstream.stop()


@pytest.fixture(scope="session")
def live(tmp_path_factory: pytest.TempPathFactory, simulated_url: str) -> Iterator[LiveGateway]:
    gateway = start_live_gateway(
        Path(tmp_path_factory.mktemp("live")),
        INFERBASE_SIMULATED_URL=simulated_url,
        INFERBASE_STREAM_KEEPALIVE_SECONDS="0.3",
        INFERBASE_MAX_BODY_BYTES="200000",
        # Many tests make routes fail on purpose; the breaker has its own tests.
        INFERBASE_ROUTE_FAILURE_THRESHOLD="100000",
    )
    try:
        yield gateway
    finally:
        stop_live_gateway(gateway)


@pytest.fixture
def http(live: LiveGateway) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live.api, headers={"Authorization": f"Bearer {live.api_key}"}, timeout=30) as client:
        yield client


@pytest.fixture
def sdk(live: LiveGateway):  # type: ignore[no-untyped-def]
    import openai

    client = openai.OpenAI(api_key=live.api_key, base_url=live.api, max_retries=0, timeout=30)
    yield client
    client.close()
