"""Run an ASGI app (the simulated upstream) with uvicorn on a free port in a background thread."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import uvicorn


@contextmanager
def running_server(app: Any, *, host: str = "127.0.0.1", startup_timeout: float = 10.0) -> Iterator[str]:
    """Serve `app` on a free port and yield its base URL once GET /health answers 200; stop it on exit.

    Raises RuntimeError when the server is not up within `startup_timeout` seconds."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", ws="none", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"sim-upstream-{port}", daemon=True
    )
    thread.start()
    base_url = f"http://{host}:{port}"
    try:
        deadline = time.monotonic() + startup_timeout
        with httpx.Client(timeout=1.0) as client:
            while True:
                try:
                    if client.get(f"{base_url}/health").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline or not thread.is_alive():
                    raise RuntimeError(f"server on {base_url} did not start within {startup_timeout}s")
        yield base_url
    finally:
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()
