"""`make test-clients`: serve the gateway as `make run` does, then run every client's tests against it.

Run from the repository root with the project's Python (`python -m tests.clients.run`): the gateway runs
on the project's env; each client's tests run in that client's env (tests/clients/.venv, .venv-instructor)
or under the Node of tests/clients/node_modules, with the gateway's address and a key in the environment.
Prints each client's outcome and ends with one `clients: N passed, N failed` line; exits 1 when any failed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tests.live import start_live_gateway, stop_live_gateway

HERE = Path(__file__).resolve().parent
# pytest's closing line ("3 failed, 12 passed, 2 warnings in 4.1s") and node's spec reporter ("ℹ pass 12").
_PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|errors?)\b")
_NODE_COUNT = re.compile(r"^ℹ (pass|fail) (\d+)$")


@dataclass(frozen=True)
class Suite:
    client: str
    command: list[str]


@dataclass(frozen=True)
class Outcome:
    client: str
    returncode: int
    passed: int
    failed: int
    seconds: float


def node_binary() -> str:
    """Return the Node 22 installed from the npm registry into node_modules, else the machine's `node`."""
    bundled = HERE / "node_modules" / ".bin" / "node"
    if bundled.exists():
        return str(bundled)
    found = shutil.which("node")
    if found is None:
        raise SystemExit("node not found: run `make test-clients`, which installs it")
    return found


def _pytest(venv: str, test_file: str) -> list[str]:
    return [str(HERE / venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
            "-c", str(HERE / "pytest.ini"), "--rootdir", str(HERE), str(HERE / test_file)]


def _node(test_file: str) -> list[str]:
    # The clients' own timeouts bound each request; the runner's bounds a test that never settles.
    return [node_binary(), "--test", "--test-reporter=spec", "--test-timeout=60000", str(HERE / test_file)]


def suites() -> list[Suite]:
    """Return one suite per client, in the order they run."""
    return [
        Suite("openai (Python)", _pytest(".venv", "test_openai_sdk.py")),
        Suite("langchain-openai", _pytest(".venv", "test_langchain.py")),
        Suite("litellm", _pytest(".venv", "test_litellm.py")),
        Suite("instructor", _pytest(".venv-instructor", "test_instructor.py")),
        Suite("openai (Node)", _node("openai_sdk.test.mjs")),
        Suite("ai + @ai-sdk/openai-compatible", _node("ai_sdk.test.mjs")),
    ]


def counts(output: str) -> tuple[int, int]:
    """Return (passed, failed) read from a pytest or node test runner's output; errors count as failed."""
    passed = failed = 0
    for line in output.splitlines():
        if match := _NODE_COUNT.match(line.strip()):
            if match[1] == "pass":
                passed = int(match[2])
            else:
                failed = int(match[2])
    if passed or failed:
        return passed, failed
    last = next((line for line in reversed(output.splitlines()) if " in " in line and _PYTEST_COUNT.search(line)), "")
    for number, word in _PYTEST_COUNT.findall(last):
        if word == "passed":
            passed = int(number)
        else:
            failed += int(number)
    return passed, failed


def run_suite(suite: Suite, env: dict[str, str]) -> Outcome:
    """Run one client's tests, echoing their output as it comes."""
    print(f"\n== {suite.client} ==", flush=True)
    started = time.monotonic()
    process = subprocess.Popen(suite.command, cwd=HERE, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    lines = []
    assert process.stdout is not None
    for line in process.stdout:
        sys.stdout.write(line)
        lines.append(line)
    returncode = process.wait()
    passed, failed = counts("".join(lines))
    if returncode and not failed:
        failed = 1  # the runner failed before counting (an import error, a crash)
    return Outcome(suite.client, returncode, passed, failed, time.monotonic() - started)


def _gateway_problems(log: str) -> str:
    """Return the gateway log without its access-log lines: warnings, errors, tracebacks."""
    return "\n".join(line for line in log.splitlines() if not re.search(r'"(GET|POST) /', line))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", help="run only the clients whose name contains this")
    args = parser.parse_args()
    started = time.monotonic()
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="inferbase-clients-") as tmp:
        gateway = start_live_gateway(
            Path(tmp),
            # The failure tests make every route fail on purpose; an opened breaker would narrow later chains.
            INFERBASE_ROUTE_FAILURE_THRESHOLD="100000",
        )
        try:
            env = {**os.environ, "INFERBASE_BASE_URL": gateway.api, "INFERBASE_API_KEY": gateway.api_key}
            for suite in suites():
                if not args.only or args.only in suite.client:
                    outcomes.append(run_suite(suite, env))
        finally:
            stop_live_gateway(gateway)
            if any(outcome.returncode for outcome in outcomes):
                print(f"\n== gateway log (access lines left out) ==\n{_gateway_problems(gateway.logs())[-6000:]}")
    print("\n== client compatibility ==")
    for outcome in outcomes:
        verdict = "FAIL" if outcome.returncode else "PASS"
        print(f"{verdict}  {outcome.client:32} {outcome.passed:3} passed, {outcome.failed} failed  "
              f"({outcome.seconds:.1f} s)")
    print(f"total {time.monotonic() - started:.1f} s (gateway start included)")
    passed = sum(outcome.passed for outcome in outcomes)
    failed = sum(outcome.failed for outcome in outcomes)
    print(f"clients: {passed} passed, {failed} failed")
    return 1 if any(outcome.returncode for outcome in outcomes) or not outcomes else 0


if __name__ == "__main__":
    sys.exit(main())
