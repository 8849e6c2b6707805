"""A provider's own credential, from the environment variable its row names (`Provider.api_key_env`).

Not a setting: which variables exist is data (one per provider row), so settings.py cannot list them. It is
read where a routing snapshot or a health probe is built, never per request (tests/routing/
test_snapshot_credentials.py fails on a read per request)."""

from __future__ import annotations

import os


def env_credential(env_name: str) -> str | None:
    """Return the credential in the environment variable `env_name` (None when it is unset, empty, or not named)."""
    return (os.environ.get(env_name) or None) if env_name else None
