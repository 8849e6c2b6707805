"""DRF authentication by API key (Bearer inf_...), for the non-hot-path endpoints."""

from __future__ import annotations

from typing import Any

from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed

from inferbase.accounts.selectors import KeyInfo, key_info_get
from inferbase.accounts.services import api_key_hash
from inferbase.gateway.errors import ApiError


def bearer_key(authorization: str) -> str | None:
    """Return the key of an `Authorization: Bearer <key>` header value, or None."""
    text = authorization.strip()
    if text[:7].lower() != "bearer ":
        return None
    return text[7:].strip() or None


def key_usable(info: KeyInfo | None) -> KeyInfo:
    """Return the key's info, or raise the 401 for an unknown or revoked key."""
    if info is None or not info.active:
        raise ApiError(401, "Invalid API key." if info is None else "This API key has been revoked.",
                       code="invalid_api_key")
    return info


class ApiKeyAuthentication(BaseAuthentication):
    def authenticate(self, request: Any) -> tuple[Any, KeyInfo] | None:
        raw = bearer_key(request.META.get("HTTP_AUTHORIZATION", ""))
        if raw is None:
            return None
        try:
            info = key_usable(key_info_get(key_hash=api_key_hash(raw)))
        except ApiError as exc:
            raise AuthenticationFailed(exc.message) from exc
        return (None, info)

    def authenticate_header(self, request: Any) -> str:
        return "Bearer"
