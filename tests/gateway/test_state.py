"""Key and snapshot lookups serve what the process holds while their refresh waits (stale while revalidating)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from channels.db import database_sync_to_async
from django.db import connections

from inferbase.accounts.services import api_key_create, api_key_hash, api_key_revoke
from inferbase.gateway.state import KeyCache, SnapshotHolder
from routing.services import catalog_load

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
async def close_thread_connections() -> AsyncIterator[None]:
    """Close what the `database_sync_to_async` thread opened, so that the test database can be dropped."""
    yield
    await database_sync_to_async(connections.close_all)()


@asynccontextmanager
async def database_thread_busy() -> AsyncIterator[None]:
    """Occupy the one thread `database_sync_to_async` runs in, as a write stalled on a locked table did."""
    started, release = threading.Event(), threading.Event()

    def hold() -> None:
        started.set()
        release.wait(30)

    busy = asyncio.ensure_future(database_sync_to_async(hold)())
    try:
        assert await asyncio.to_thread(started.wait, 10)
        yield
    finally:
        release.set()
        await busy


async def test_a_stale_key_is_served_while_its_refresh_waits(settings) -> None:  # type: ignore[no-untyped-def]
    created = await database_sync_to_async(api_key_create)(org_slug="acme", project_name="web")
    keys = KeyCache(SnapshotHolder())
    key_hash = api_key_hash(created.raw_key)
    held = await keys.get(key_hash)
    assert held is not None and held.active
    settings.INFERBASE_KEY_CACHE_SECONDS = 0
    await database_sync_to_async(api_key_revoke)(api_key=created.api_key)
    async with database_thread_busy():
        async with asyncio.timeout(10):
            assert await keys.get(key_hash) == held
    # The refresh ran once the thread was free: the revocation shows.
    deadline = time.monotonic() + 10
    while (info := await keys.get(key_hash)) is not None and info.active:
        assert time.monotonic() < deadline, "the revocation was not seen"
        await asyncio.sleep(0.01)


async def test_a_held_snapshot_is_served_while_its_check_waits(settings) -> None:  # type: ignore[no-untyped-def]
    await database_sync_to_async(catalog_load)(catalog_path=Path(settings.INFERBASE_CATALOG_PATH),
                                               evidence_path=Path(settings.INFERBASE_EVIDENCE_PATH))
    holder = SnapshotHolder()
    held = await holder.get()
    settings.INFERBASE_SNAPSHOT_CHECK_SECONDS = 0
    async with database_thread_busy():
        async with asyncio.timeout(10):
            assert await holder.get() is held
