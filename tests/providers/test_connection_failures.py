"""A connection that fails is named for what broke (refused, reset, DNS, TLS), on both transports, and
is never reported as a timeout; a real timeout still is one. Real sockets, no mocks."""

from __future__ import annotations

import asyncio
import socket
import struct
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from providers.base import CallOptions, UpstreamTarget
from providers.errors import UNREACHABLE, UpstreamConnectError, UpstreamError, UpstreamTimeout
from providers.http import _build
from providers.openai_compat import OpenAICompatibleAdapter

TRANSPORTS = ["aiohttp", "httpx"]
BODY = {"messages": [{"role": "user", "content": "hi"}]}


def options(seconds: float = 5.0) -> CallOptions:
    return CallOptions(first_token_timeout=seconds, idle_timeout=seconds, deadline=time.monotonic() + 30)


def target(base_url: str) -> UpstreamTarget:
    return UpstreamTarget("mine", "openai", base_url, "m")


async def failure(transport: str, base_url: str, *, stream: bool, seconds: float = 5.0) -> UpstreamError:
    """Call the OpenAI-compatible adapter at base_url and return the UpstreamError it raises."""
    client = _build("default" if transport == "httpx" else transport)
    adapter = OpenAICompatibleAdapter()
    try:
        with pytest.raises(UpstreamError) as caught:
            if stream:
                async for _ in adapter.stream(client, target(base_url), BODY, options(seconds)):
                    pass
            else:
                await adapter.complete(client, target(base_url), BODY, options(seconds))
        return caught.value
    finally:
        await client.aclose()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def _serve(handler: Any) -> AsyncIterator[str]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.close()


@pytest.fixture
async def resetting_host() -> AsyncIterator[str]:
    """A server that reads the request and resets the connection (RST, not a clean close)."""

    async def reset(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1024)
        writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.close()

    async for host in _serve(reset):
        yield host


@pytest.fixture
async def plaintext_host() -> AsyncIterator[str]:
    """A plain-HTTP server: a TLS client gets an answer that is not a TLS handshake."""

    async def plain(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1024)
        writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    async for host in _serve(plain):
        yield host


@pytest.fixture
async def silent_host() -> AsyncIterator[str]:
    """A server that accepts and never answers."""
    held: list[asyncio.StreamWriter] = []

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        await reader.read(1024)

    async for host in _serve(silent):
        yield host
    for writer in held:
        writer.close()


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_refused_connection_is_connection_refused_not_a_timeout(transport: str, stream: bool) -> None:
    error = await failure(transport, f"http://127.0.0.1:{closed_port()}/v1", stream=stream)
    assert isinstance(error, UpstreamConnectError) and not isinstance(error, UpstreamTimeout)
    assert error.outcome == "connection_refused" and error.outcome in UNREACHABLE
    assert "connection refused" in error.message


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_reset_connection_is_connection_reset(transport: str, stream: bool, resetting_host: str) -> None:
    error = await failure(transport, f"http://{resetting_host}/v1", stream=stream)
    assert error.outcome == "connection_reset", error.message
    assert "connection reset" in error.message


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_name_that_does_not_resolve_is_a_dns_failure(transport: str) -> None:
    error = await failure(transport, "http://no-such-upstream.invalid/v1", stream=False)
    assert error.outcome == "dns_failure", error.message
    assert "DNS lookup failed" in error.message


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_failed_tls_handshake_is_a_tls_failure(transport: str, plaintext_host: str) -> None:
    error = await failure(transport, f"https://{plaintext_host}/v1", stream=False)
    assert error.outcome == "tls_failure", error.message
    assert "TLS handshake failed" in error.message


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_an_upstream_that_never_answers_is_still_a_timeout(transport: str, stream: bool,
                                                                 silent_host: str) -> None:
    error = await failure(transport, f"http://{silent_host}/v1", stream=stream, seconds=0.3)
    assert isinstance(error, UpstreamTimeout)
