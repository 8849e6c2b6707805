"""DRF authentication by API key (Bearer inf_...), for the non-hot-path endpoints."""

from __future__ import annotations

from typing import Any

from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed

from inferbase.accounts.selectors import KeyInfo, key_info_get
from inferbase.accounts.services import api_key_hash


class ApiKeyAuthentication(BaseAuthentication):
    def authenticate(self, request: Any) -> tuple[Any, KeyInfo] | None:
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header[:7].lower() == "bearer ":
            return None
        raw = header[7:].strip()
        info = key_info_get(key_hash=api_key_hash(raw)) if raw else None
        if info is None:
            raise AuthenticationFailed("Invalid API key.")
        if not info.active:
            raise AuthenticationFailed("This API key has been revoked.")
        return (None, info)

    def authenticate_header(self, request: Any) -> str:
        return "Bearer"
