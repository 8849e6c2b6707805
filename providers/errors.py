"""Errors an upstream call can end with, translated from httpx and upstream statuses at the boundary."""

from __future__ import annotations


class UpstreamError(Exception):
    """An attempt against one route failed; `retryable` says whether the next route may be tried."""

    outcome = "upstream_error"
    retryable = True

    def __init__(self, message: str, *, status: int | None = None, body: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.body = body


# What broke when a connection failed, as an attempt's outcome, in words for messages.
CONNECTION_CAUSES = {
    "connection_refused": "connection refused",
    "connection_reset": "connection reset",
    "dns_failure": "DNS lookup failed",
    "tls_failure": "TLS handshake failed",
    "connect_error": "connection failed",
    "connection_lost": "connection lost during the answer",
}
# The causes that mean the upstream was never reached: the request is answered 502 upstream_unreachable.
UNREACHABLE = frozenset(CONNECTION_CAUSES) - {"connection_lost"}


class UpstreamConnectError(UpstreamError):
    """The connection failed: never made (refused, DNS, TLS), reset, or lost mid-answer; `outcome` names
    which, as a key of CONNECTION_CAUSES."""

    outcome = "connect_error"

    def __init__(self, message: str, *, cause: str = "connect_error") -> None:
        super().__init__(message)
        self.outcome = cause


class UpstreamTimeout(UpstreamError):
    outcome = "timeout"


class FirstTokenTimeout(UpstreamTimeout):
    outcome = "first_token_timeout"


class UpstreamStatusError(UpstreamError):
    """The upstream answered with an error status (5xx, 429, or a 4xx)."""

    def __init__(self, message: str, *, status: int, body: str | None = None) -> None:
        super().__init__(message, status=status, body=body)
        self.outcome = "rate_limited" if status == 429 else f"http_{status}"
        # A 4xx other than 408/409/429 is the request's fault: another route would refuse it too,
        # except auth/permission/not-found problems that are specific to this route's credential.
        self.retryable = status >= 500 or status in (401, 403, 404, 408, 409, 429)


class UpstreamMalformed(UpstreamError):
    outcome = "malformed_response"

