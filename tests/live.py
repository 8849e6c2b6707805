"""A live gateway for end-to-end tests: daphne in its own process on a free port, on its own database,
serving the simulated upstream mounted on itself (the embedded default, as `make run` serves it)."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import httpx

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LiveGateway:
    base_url: str  # http://127.0.0.1:PORT
    env: dict[str, str]
    api_key: str
    process: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None
    cleanup: list[object] = field(default_factory=list)
    repo: Path = REPO  # the checkout it runs from (the benchmark runs an older one beside this one)

    @property
    def api(self) -> str:
        return f"{self.base_url}/api/v1/inference"

    def manage(self, *args: str) -> str:
        """Run a management command against the live gateway's database; return its stdout."""
        result = subprocess.run([sys.executable, "manage.py", *args], cwd=self.repo, env=self.env, capture_output=True,
                                text=True, timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed: {result.stderr[-2000:]}")
        return result.stdout

    def create_key(self, *, org: str, project: str = "default", plan: str | None = None, policy: str | None = None,
                   **policy_fields: object) -> str:
        """Create a key (and its organization, project and, when missing, policy); `policy_fields` set on the policy."""
        args = ["create_api_key", "--org", org, "--project", project]
        if plan:
            args += ["--plan", plan]
        if policy:
            args += ["--policy", policy, "--create-policy"]
        key = self.manage(*args).strip().splitlines()[-1]
        if policy_fields:
            # .update() sends no signal: bump the snapshot version so the server sees the change.
            self.shell("from routing.models import RoutingPolicy; "
                       "from routing.snapshot import snapshot_version_bump; "
                       f"RoutingPolicy.objects.filter(name={policy!r}).update(**{policy_fields!r}); "
                       "snapshot_version_bump()")
        return key

    def remove_provider(self, slug: str) -> None:
        """Remove a provider added with add_provider, and the models only it served (the gateway is shared)."""
        self.shell("from providers.models import Provider; from routing.models import Model; "
                   "from routing.snapshot import snapshot_version_bump; "
                   f"Model.objects.filter(routes__provider__slug={slug!r}, from_catalog=False).delete(); "
                   f"Provider.objects.filter(slug={slug!r}).delete(); snapshot_version_bump()")

    def shell(self, code: str) -> str:
        """Run Python in `manage.py shell` against the live database; return what it printed last."""
        lines = self.manage("shell", "--no-imports", "-c", code).strip().splitlines()
        return lines[-1] if lines else ""

    def logs(self) -> str:
        return self.log_path.read_text() if self.log_path and self.log_path.exists() else ""

    def record_counts(self) -> tuple[int, int]:
        """Return how many request logs and routing decisions the database holds."""
        logs, decisions = self.shell("from observability.models import RequestLog, RoutingDecision; "
                                     "print(RequestLog.objects.count(), RoutingDecision.objects.count())").split()
        return int(logs), int(decisions)


@contextmanager
def database_locked(gateway: LiveGateway) -> Iterator[None]:
    """Hold the gateway's database against its log writer from another process: on SQLite an exclusive
    lock on the file (readers go on, in WAL mode), on PostgreSQL `LOCK TABLE` on the request log."""
    url = gateway.env.get("DATABASE_URL")
    if url:
        import psycopg

        with psycopg.connect(url) as conn:  # not autocommit: the lock lasts until the rollback
            conn.execute("LOCK TABLE observability_requestlog IN ACCESS EXCLUSIVE MODE")
            try:
                yield
            finally:
                conn.rollback()
        return
    conn = sqlite3.connect(gateway.env["SQLITE_PATH"], isolation_level=None, timeout=30)
    try:
        conn.execute("BEGIN EXCLUSIVE")
        try:
            yield
        finally:
            conn.execute("ROLLBACK")
    finally:
        conn.close()


def _database_env(tmp: Path, tag: str) -> tuple[dict[str, str], object | None]:
    url = os.environ.get("DATABASE_URL")
    if not url:
        return {"SQLITE_PATH": str(tmp / f"live-{tag}.sqlite3")}, None
    import psycopg

    name = f"inferbase_live_{tag}"
    admin = psycopg.connect(url, autocommit=True)
    admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
    admin.execute(f'CREATE DATABASE "{name}"')
    parsed = urlparse(url)
    live_url = urlunparse(parsed._replace(path=f"/{name}"))

    def drop() -> None:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()

    return {"DATABASE_URL": live_url}, drop


def start_live_gateway(tmp: Path, *, repo: Path = REPO, **extra_env: str) -> LiveGateway:
    """Migrate a fresh database, load the catalog, create a key, collect static files and start daphne; poll until it
    answers. `repo` is the checkout it runs from (this one unless the benchmark compares another)."""
    tag = uuid.uuid4().hex[:10]
    port = free_port()
    db_env, drop = _database_env(tmp, tag)
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SQLITE_PATH")},
        **db_env,
        "DJANGO_SETTINGS_MODULE": "inferbase.settings",
        "PORT": str(port),
        "INFERBASE_SIMULATED_TIME_SCALE": "0",
        "INFERBASE_CACHE_PREFIX": f"live-{tag}",
        "INFERBASE_CACHE_DIR": str(tmp / f"cache-{tag}"),
        "INFERBASE_SPOOL_DIR": str(tmp / f"spool-{tag}"),
        "INFERBASE_STATIC_DIR": str(tmp / f"static-{tag}"),
        "INFERBASE_SNAPSHOT_CHECK_SECONDS": "0.2",
        # Evidence from the session's traffic would change later tests' picks: the tests that exercise
        # the periodic tasks start a gateway with the scheduler on.
        "INFERBASE_SCHEDULER": "false",
        "PYTHONUNBUFFERED": "1",
        **extra_env,
    }
    gateway = LiveGateway(base_url=f"http://127.0.0.1:{port}", env=env, api_key="", repo=repo)
    if drop is not None:
        gateway.cleanup.append(drop)
    key_file = tmp / f"key-{tag}"
    gateway.manage("bootstrap", "--key-file", str(key_file))
    gateway.manage("collectstatic", "--noinput", "--verbosity", "0")  # as `make run` does: the admin's styles
    gateway.api_key = key_file.read_text().strip()
    gateway.log_path = tmp / f"daphne-{tag}.log"
    log = gateway.log_path.open("wb")
    gateway.cleanup.append(log.close)
    gateway.process = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "inferbase.asgi:application"],
        cwd=repo, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    if not _until_serving(f"{gateway.base_url}/api/v1/models", gateway.process, timeout=60):
        stop_live_gateway(gateway)
        raise RuntimeError(f"live gateway did not start: {gateway.logs()[-3000:]}")
    return gateway


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Terminate a server process, killing it when it does not stop within 10 s."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def stop_live_gateway(gateway: LiveGateway) -> None:
    if gateway.process is not None:
        stop_process(gateway.process)
    for fn in gateway.cleanup:
        fn()  # type: ignore[operator]


def poll(fn, *, timeout: float = 10.0, interval: float = 0.05):  # type: ignore[no-untyped-def]
    """Call fn until it returns a truthy value or the deadline passes; return the value or raise."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        time.sleep(interval)


def decision_of(http: httpx.Client, request_id: str) -> dict | None:
    """Return a request's routing decision once the log writer has stored it, else None."""
    response = http.get(f"/routing-decisions/{request_id}")
    return response.json() if response.status_code == 200 else None


def fail_the_first_pick(  # type: ignore[no-untyped-def]
    http: httpx.Client, send, *, fault: str = "fail=503", outcome: str = "http_503", tries: int = 6
) -> tuple[list[str], dict, dict]:
    """Make a request whose first pick fails (by default with a 503) and falls back; return (the models the
    directive failed, the response body, its routing decision).

    `send(directive)` makes the request with the directive in its last user turn and returns a body with the
    served `model` and the request `id`. The directive is text the classifier reads, so naming a model can
    move the pick to another (naming each in turn can cycle): each try fails every model served so far,
    until the pick is one of them and its attempt ends in `outcome`.
    """
    failing = [send("")["model"]]
    for _ in range(tries):
        body = send(f"[sim:{fault}@{','.join(failing)}]")
        decision = poll(lambda rid=body["id"]: decision_of(http, rid))
        if decision["attempts"][0]["outcome"] == outcome:
            return failing, body, decision
        failing.append(body["model"])
    raise AssertionError(f"in {tries} tries no request was routed first to a model its directive fails: {failing}")


@dataclass
class ServerProcess:
    """A server this test session started in its own process (the simulated upstream, another gateway)."""

    base_url: str
    process: subprocess.Popen[bytes]
    log: object

    @property
    def url(self) -> str:
        return self.base_url

    @property
    def api(self) -> str:
        return f"{self.base_url}/api/v1/inference"

    def stop(self) -> None:
        stop_process(self.process)
        self.log.close()  # type: ignore[attr-defined]


def _until_serving(url: str, process: subprocess.Popen[bytes], *, timeout: float) -> bool:
    """Poll url until it answers 200; return False when the process exits first or the deadline passes."""
    try:
        poll(lambda: process.poll() is not None or _answers(url), timeout=timeout)
    except AssertionError:
        return False
    return process.poll() is None


def _serving(server: ServerProcess, health_url: str, *, timeout: float) -> ServerProcess:
    """Return the server once health_url answers 200; stop it and raise if it does not in time."""
    if not _until_serving(health_url, server.process, timeout=timeout):
        server.stop()
        raise AssertionError(f"{server.base_url} did not start within {timeout}s")
    return server


# Enough for every request one test makes; tests find theirs by a `[sim:tag=...]` of their own.
SIMULATED_RECORDED = 2000


def start_simulated(tmp: Path) -> ServerProcess:
    """Start `python -m providers.simulated` on a free port, recording what it receives (GET /debug/requests);
    poll its /health until it answers."""
    port = free_port()
    log = (tmp / "simulated.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "providers.simulated", "--host", "127.0.0.1", "--port", str(port), "--time-scale", "0",
         "--record-requests", str(SIMULATED_RECORDED)],
        cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    return _serving(ServerProcess(url, process, log), f"{url}/health", timeout=30)


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def start_extra_server(gateway: LiveGateway, tmp: Path, *, server: str) -> ServerProcess:
    """Start another gateway process (daphne or uvicorn) on the live gateway's database and cache."""
    port = free_port()
    env = {**gateway.env, "PORT": str(port)}
    if server == "uvicorn":
        command = [sys.executable, "-m", "uvicorn", "inferbase.asgi:application", "--host", "127.0.0.1",
                   "--port", str(port), "--loop", "uvloop", "--lifespan", "on", "--log-level", "warning"]
    else:
        command = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "inferbase.asgi:application"]
    log = (tmp / f"{server}-{port}.log").open("wb")
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}"
    return _serving(ServerProcess(base_url, process, log), f"{base_url}/api/v1/models", timeout=60)
