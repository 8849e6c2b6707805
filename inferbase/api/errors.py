"""DRF's exception handler: every DRF view error in the one envelope (built in inferbase.gateway.errors)."""

from __future__ import annotations

import logging
from typing import Any

from rest_framework import exceptions as drf_exceptions
from rest_framework.response import Response

from inferbase.gateway.errors import TYPE_BY_STATUS, ApiError, ErrorType, error_envelope

logger = logging.getLogger("inferbase.api")


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
            error_envelope(str(exc.detail), type=TYPE_BY_STATUS.get(status, ErrorType.API), code=exc.default_code),
            status=status,
        )
    from django.http import Http404

    if isinstance(exc, Http404):
        return Response(error_envelope("Not found.", type=ErrorType.NOT_FOUND, code="not_found"), status=404)
    logger.exception("unhandled error in %s", context.get("view").__class__.__name__ if context.get("view") else "view")
    return Response(error_envelope("The server failed to handle the request.", type=ErrorType.API, code="internal_error"), status=500)
