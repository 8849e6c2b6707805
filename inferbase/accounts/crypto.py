"""Encryption at rest for provider keys (Fernet, key from INFERBASE_ENCRYPTION_KEY or SECRET_KEY)."""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


@lru_cache(maxsize=4)
def _fernet(secret: str) -> Fernet:
    digest = hashlib.sha256(("inferbase-provider-keys:" + secret).encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def _current() -> Fernet:
    return _fernet(settings.INFERBASE_ENCRYPTION_KEY or settings.SECRET_KEY)


def secret_encrypt(plaintext: str) -> str:
    """Return the encrypted form of a provider credential."""
    return _current().encrypt(plaintext.encode()).decode()


def secret_decrypt(token: str) -> str | None:
    """Return the plaintext credential, or None when it cannot be decrypted with the current key."""
    try:
        return _current().decrypt(token.encode()).decode()
    except InvalidToken:
        return None
