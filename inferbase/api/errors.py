"""The one error envelope, `{"error": {"message", "type", "code", "param"}}`, built in one place."""

from __future__ import annotations

import logging
from enum import StrEnum
from typing import Any

from rest_framework import exceptions as drf_exceptions
from rest_framework.response import Response

logger = logging.getLogger("inferbase.api")


class ErrorType(StrEnum):
    INVALID_REQUEST = "invalid_request_error"
    AUTHENTICATION = "authentication_error"
    PERMISSION = "permission_error"
    NOT_FOUND = "not_found_error"
    RATE_LIMIT = "rate_limit_error"
    UPSTREAM = "upstream_error"
    API = "api_error"


_TYPE_BY_STATUS = {
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
        self.type = type or _TYPE_BY_STATUS.get(status, ErrorType.API)

    def envelope(self) -> dict[str, Any]:
        return error_envelope(self.message, type=self.type, code=self.code, param=self.param)


def error_envelope(message: str, *, type: str, code: str | None, param: str | None = None) -> dict[str, Any]:
    """Return the error body every API error uses."""
    return {"error": {"message": message, "type": str(type), "code": code, "param": param}}


def drf_exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """Render every DRF view error in the envelope; unknown exceptions become a logged 500."""
    if isinstance(exc, ApiError):
        return Response(exc.envelope(), status=exc.status)
    if isinstance(exc, drf_exceptions.NotAuthenticated | drf_exceptions.AuthenticationFailed):
        return Response(error_envelope(str(exc.detail), type=ErrorType.AUTHENTICATION, code="invalid_api_key"), status=401)
    if isinstance(exc, drf_exceptions.MethodNotAllowed):
        return Response(error_envelope(str(exc.detail), type=ErrorType.INVALID_REQUEST, code="method_not_allowed"), status=405)
    if isinstance(exc, drf_exceptions.NotFound):
        return Response(error_envelope(str(exc.detail), type=ErrorType.NOT_FOUND, code="not_found"), status=404)
    if isinstance(exc, drf_exceptions.APIException):
        status = exc.status_code
        return Response(
            error_envelope(str(exc.detail), type=_TYPE_BY_STATUS.get(status, ErrorType.API), code=exc.default_code),
            status=status,
        )
    from django.http import Http404

    if isinstance(exc, Http404):
        return Response(error_envelope("Not found.", type=ErrorType.NOT_FOUND, code="not_found"), status=404)
    logger.exception("unhandled error in %s", context.get("view").__class__.__name__ if context.get("view") else "view")
    return Response(error_envelope("The server failed to handle the request.", type=ErrorType.API, code="internal_error"), status=500)
