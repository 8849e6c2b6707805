"""Failed portal logins, counted per username and per client address in the shared cache."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

PREFIX = "portal-login-failures"


def _username_key(username: str) -> str:
    # Hashed: a username may hold characters a cache key must not.
    return f"{PREFIX}:user:{hashlib.sha256(username.strip().lower().encode()).hexdigest()[:32]}"


def _address_key(address: str) -> str:
    return f"{PREFIX}:addr:{address}"


def client_address(request: HttpRequest | None) -> str:
    """Return the client's address as the server saw it (daphne --proxy-headers fills it behind a proxy)."""
    if request is None:
        return "unknown"
    return request.META.get("REMOTE_ADDR") or "unknown"


def login_blocked(*, username: str, address: str) -> bool:
    """Return True when the username or the address has used up its failures for the window."""
    counts = cache.get_many([_username_key(username), _address_key(address)])
    return (counts.get(_username_key(username), 0) >= settings.INFERBASE_LOGIN_FAILURES_PER_USERNAME
            or counts.get(_address_key(address), 0) >= settings.INFERBASE_LOGIN_FAILURES_PER_ADDRESS)


def login_failed(*, username: str, address: str) -> None:
    """Count one failure against the username and the address; the window starts at the first."""
    window = settings.INFERBASE_LOGIN_FAILURE_WINDOW_SECONDS
    for key in (_username_key(username), _address_key(address)):
        cache.add(key, 0, timeout=window)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=window)


def login_succeeded(*, username: str) -> None:
    """Forget the username's failures (the address keeps its count: it may be trying many names)."""
    cache.delete(_username_key(username))
