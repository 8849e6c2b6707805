"""The one error envelope, `{"error": {"message", "type", "code", "param"}}`, and the error that carries it.

Shared by the API (validation, authentication, DRF views) and the gateway (routing and chain failures), so
the gateway never imports the API layer.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from routing.decision import Classification


class ErrorType(StrEnum):
    INVALID_REQUEST = "invalid_request_error"
    AUTHENTICATION = "authentication_error"
    PERMISSION = "permission_error"
    NOT_FOUND = "not_found_error"
    RATE_LIMIT = "rate_limit_error"
    UPSTREAM = "upstream_error"
    API = "api_error"


TYPE_BY_STATUS = {
    400: ErrorType.INVALID_REQUEST,
    401: ErrorType.AUTHENTICATION,
    403: ErrorType.PERMISSION,
    404: ErrorType.NOT_FOUND,
    405: ErrorType.INVALID_REQUEST,
    413: ErrorType.INVALID_REQUEST,
    415: ErrorType.INVALID_REQUEST,
    422: ErrorType.INVALID_REQUEST,
    429: ErrorType.RATE_LIMIT,
    502: ErrorType.UPSTREAM,
    503: ErrorType.UPSTREAM,
    504: ErrorType.UPSTREAM,
}


class ApiError(Exception):
    """An error answered to the client with a status and the envelope."""

    def __init__(self, status: int, message: str, *, code: str, param: str | None = None,
                 type: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.param = param
        self.type = type or TYPE_BY_STATUS.get(status, ErrorType.API)

    def envelope(self) -> dict[str, Any]:
        return error_envelope(self.message, type=self.type, code=self.code, param=self.param)

    @property
    def disposition(self) -> str:
        """Return the log's final_disposition for a request that ends with this error (refused before routing)."""
        return "rejected" if self.status < 500 else self.code


def error_envelope(message: str, *, type: str, code: str | None, param: str | None = None) -> dict[str, Any]:
    """Return the error body every API error uses."""
    return {"error": {"message": message, "type": str(type), "code": code, "param": param}}


class NotRouted(ApiError):
    """Routing found nothing to serve the request; carries the filter trail up to the step that emptied it."""

    def __init__(self, status: int, message: str, *, code: str, param: str | None, filter_trail: tuple[dict[str, Any], ...],
                 filter_trail_text: tuple[str, ...], routing_mode: str, classification: Classification) -> None:
        super().__init__(status, message, code=code, param=param)
        self.filter_trail = filter_trail
        self.filter_trail_text = filter_trail_text
        self.routing_mode = routing_mode
        self.classification = classification

    @property
    def disposition(self) -> str:
        return "not_routed"


class ChainFailed(ApiError):
    """No link of the chain served the request, or the answer broke off: the disposition is the code."""

    def __init__(self, status: int, message: str, *, code: str) -> None:
        super().__init__(status, message, code=code, type=ErrorType.UPSTREAM)

    @property
    def disposition(self) -> str:
        return self.code
