"""Gateway overhead benchmark: one run measures the same workload direct to the upstream, through the floor
(a bare Channels consumer), through the gateway (pinned and auto, daphne; uvicorn for one set) and, with
--peer, through a LiteLLM proxy. Writes bench-out/results-<timestamp>.json and the tables in docs/benchmarks.md.

    .venv/bin/python -m bench.run            # make bench-gateway
    .venv/bin/python -m bench.run --gateway-before ../before   # make bench-gateway BEFORE=../before
    .venv/bin/python -m bench.run --quick    # one short round, no docs: for iterating
    .venv/bin/python -m bench.run --peer     # make bench-peer (needs .venv-litellm)

Beside the gateway as shipped (default settings: route samples, the live tail, the embedded scheduler), the
run starts one gateway per feature measured, each differing by one thing: route samples off
(INFERBASE_ROUTE_SAMPLES=false), the live tail off (INFERBASE_LIVE_TAIL=false), and a key with rpm/tpm limits
under a policy with PII checks on input and output. With --gateway-before, a gateway from another checkout
(e.g. `git worktree add --detach ../before <commit>`) runs beside them under the same load, so a change is
measured before and after in one run. These run at --feature-concurrency, pinned (and auto for before), in the
grid's rounds and then --feature-rounds more with the floor and the shipped gateway beside them.

Every server runs in its own process on loopback; the load generator (bench/loadgen.py) runs in its own
process per configuration and reads the target process's CPU from /proc around its measured window."""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.live import (  # noqa: E402
    LiveGateway,
    free_port,
    poll,
    start_live_gateway,
    stop_live_gateway,
    stop_process,
)

OUT = REPO / "bench-out"
DOC = REPO / "docs" / "benchmarks.md"
PINNED = "meta-llama-3.3-70b"
TOKENS = 80  # the simulated upstream streams 4 tokens per chunk: 80 tokens = 20 content chunks
CHAT = "/api/v1/inference/chat/completions"
# The gateway as shipped runs its periodic tasks in-process (the embedded default, as `make run` does); tests
# turn them off, the benchmark does not.
SHIPPED = {"INFERBASE_SCHEDULER": "true"}
# One gateway per feature, each the shipped one with one thing changed (target name -> environment).
FEATURE_OFF = {
    "gateway-pinned-no-samples": {"INFERBASE_ROUTE_SAMPLES": "false"},
    "gateway-pinned-no-tail": {"INFERBASE_LIVE_TAIL": "false"},
}
LIMITED = "gateway-pinned-limits-guardrails"
# A key limited well above what the run sends (so every request is admitted and counted), under a policy that
# checks prompts and answers for PII (none in them: the checks scan and find nothing). Made through the
# gateway's own services, as the portal and the admin make them.
LIMITED_KEY_SETUP = """
from billing.guardrails.config import guardrail_config_parse
from billing.services import scope_settings_save
from inferbase.accounts.services import api_key_create
created = api_key_create(org_slug="bench-limited", project_name="default", policy_name="pii-checked",
                         create_policy=True, name="limited")
guardrails = {"input": [{"check": "pii", "action": "redact", "price_micros": 10}],
              "output": [{"check": "pii", "action": "redact", "price_micros": 10}]}
guardrail_config_parse(guardrails)
policy = created.api_key.policy
policy.guardrails = guardrails
policy.full_clean()
policy.save()
scope_settings_save(scope="key", scope_id=created.api_key.pk, monthly_micros=None, alert_percent=80,
                    requests_per_minute=10_000_000, tokens_per_minute=1_000_000_000)
print(created.raw_key)
"""


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def wait_http(url: str, proc: subprocess.Popen | None, timeout: float = 90, method: str = "GET",
              json_body: dict | None = None, ok=(200,), headers: dict | None = None) -> None:
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=3) as client:
        while True:
            try:
                if client.request(method, url, json=json_body, headers=headers).status_code in ok:
                    return
            except httpx.TransportError:
                pass
            if (proc is not None and proc.poll() is not None) or time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not come up")
            time.sleep(0.2)


def tree_pids(root: int) -> list[int]:
    """root and all its descendants (LiteLLM may fork a server process)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def stop(proc: subprocess.Popen | None) -> None:
    if proc is not None:
        stop_process(proc)


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


class Bench:
    def __init__(self, args: argparse.Namespace, tmp: Path) -> None:
        self.args = args
        self.tmp = tmp
        self.procs: list[subprocess.Popen] = []
        self.results: list[dict] = []
        self.targets: dict[str, dict] = {}
        self.gateway: LiveGateway | None = None
        self.gateways: list[LiveGateway] = []
        self.before_commit: str | None = None

    # --- servers -------------------------------------------------------------------------------------
    def spawn(self, name: str, cmd: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
        logf = (self.tmp / f"{name}.log").open("wb")
        proc = subprocess.Popen(cmd, cwd=REPO, env=env or os.environ.copy(), stdout=logf, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc

    def start_upstream(self) -> str:
        port = free_port()
        proc = self.spawn("upstream", [sys.executable, "-m", "providers.simulated", "--host", "127.0.0.1",
                                       "--port", str(port), "--time-scale", "0"])
        base = f"http://127.0.0.1:{port}"
        wait_http(f"{base}/health", proc)
        self.upstream = base
        self.targets["direct"] = {"url": f"{base}/openai/v1/chat/completions", "pid": proc.pid, "key": "",
                                  "server": "uvicorn (simulated upstream)"}
        return base

    def _live(self, repo: Path = REPO, **env: str) -> LiveGateway:
        gateway = start_live_gateway(self.tmp, repo=repo, INFERBASE_SIMULATED_URL=self.upstream,
                                     INFERBASE_SIMULATED_MOUNT="false", INFERBASE_SNAPSHOT_CHECK_SECONDS="1.0", **env)
        self.gateways.append(gateway)
        return gateway

    def _gateway_target(self, name: str, gateway: LiveGateway, model: str, key: str | None = None,
                        server: str = "daphne") -> None:
        self.targets[name] = {"url": gateway.base_url + CHAT, "pid": gateway.process.pid,
                              "key": key or gateway.api_key, "model": model, "server": server}

    def start_gateway(self, repo: Path = REPO) -> None:
        self.gateway = self._live(repo=repo, **SHIPPED)
        self._gateway_target("gateway-pinned", self.gateway, PINNED)
        self._gateway_target("gateway-auto", self.gateway, "auto")

    def start_feature_gateways(self, before: Path | None) -> None:
        """Start, side by side, a gateway per feature measured and (given) the other checkout's gateway."""
        starts: dict[str, Callable[[], None]] = {name: partial(self._feature_off, name, env)
                                                 for name, env in FEATURE_OFF.items()}
        starts[LIMITED] = self._limited
        if before is not None:
            starts["before"] = partial(self._before, before)
        with ThreadPoolExecutor(max_workers=2) as pool:  # migrations on a fresh database each: two at a time
            for future in [pool.submit(fn) for fn in starts.values()]:
                future.result()

    def _feature_off(self, name: str, env: dict[str, str]) -> None:
        self._gateway_target(name, self._live(**SHIPPED, **env), PINNED, server="daphne, " + ", ".join(
            f"{k}={v}" for k, v in env.items()))

    def _limited(self) -> None:
        gateway = self._live(**SHIPPED)
        key = gateway.shell(LIMITED_KEY_SETUP)
        self._gateway_target(LIMITED, gateway, PINNED, key=key, server="daphne, key with rpm/tpm limits, PII checks")
        # Made after the gateway started: the edit reaches it with its next snapshot (stale while revalidating).
        body = {"model": PINNED, "messages": [{"role": "user", "content": "hi"}]}
        poll(lambda: "x-ratelimit-limit-requests" in httpx.post(
            gateway.base_url + CHAT, json=body, headers={"Authorization": f"Bearer {key}"}, timeout=30).headers,
            timeout=30, interval=0.5)

    def _before(self, repo: Path) -> None:
        gateway = self._live(repo=repo, **SHIPPED)
        commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        self.before_commit = commit
        for name, model in (("before-pinned", PINNED), ("before-auto", "auto")):
            self._gateway_target(name, gateway, model, server=f"daphne, checkout {repo} at {commit}")

    def start_floor(self) -> None:
        port = free_port()
        env = {**os.environ, "BENCH_UPSTREAM": self.upstream}
        proc = self.spawn("floor", [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
                                    "bench.floor_app:application"], env)
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        wait_http(url, proc, method="POST", json_body={"model": PINNED, "messages": [{"role": "user", "content": "hi"}]})
        self.targets["floor"] = {"url": url, "pid": proc.pid, "key": "", "server": "daphne"}

    def start_uvicorn_gateway(self) -> subprocess.Popen:
        port = free_port()
        env = {**self.gateway.env, "PORT": str(port)}
        proc = self.spawn("gateway-uvicorn", [sys.executable, "-m", "uvicorn", "inferbase.asgi:application",
                                              "--host", "127.0.0.1", "--port", str(port)], env)
        wait_http(f"http://127.0.0.1:{port}/api/v1/models", proc)
        for mode, model in (("gateway-uvicorn-pinned", PINNED), ("gateway-uvicorn-auto", "auto")):
            self.targets[mode] = {"url": f"http://127.0.0.1:{port}{CHAT}", "pid": proc.pid,
                                  "key": self.gateway.api_key, "model": model, "server": "uvicorn"}
        return proc

    def start_litellm(self) -> subprocess.Popen | None:
        from bench import peer_litellm

        if not peer_litellm.available():
            self.litellm_failure = "no .venv-litellm/bin/litellm (run make bench-peer, which installs it)"
            log(self.litellm_failure)
            return None
        port = free_port()
        cmd, env, key = peer_litellm.command(upstream=self.upstream, model=PINNED, port=port, tmp=self.tmp)
        proc = self.spawn("litellm", cmd, env)
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        try:
            wait_http(url, proc, timeout=180, method="POST", headers={"Authorization": f"Bearer {key}"},
                      json_body={"model": PINNED, "messages": [{"role": "user", "content": "hi"}]})
        except RuntimeError:
            self.litellm_failure = (self.tmp / "litellm.log").read_text(errors="replace")[-3000:]
            log("LiteLLM did not start: " + self.litellm_failure)
            return None
        self.targets["litellm"] = {"url": url, "pid": proc.pid, "key": key, "tree": True,
                                   "server": "litellm proxy (uvicorn, 1 worker)"}
        return proc

    # --- measuring -----------------------------------------------------------------------------------
    def measure(self, target: str, stream: bool, concurrency: int, round_: int) -> dict:
        t = self.targets[target]
        pids = tree_pids(t["pid"]) if t.get("tree") else [t["pid"]]
        cmd = [sys.executable, "-m", "bench.loadgen", "--url", t["url"], "--model", t.get("model", PINNED),
               "--concurrency", str(concurrency), "--duration", str(self.args.duration),
               "--warmup", str(self.args.warmup), "--tokens", str(TOKENS), "--pid", ",".join(map(str, pids))]
        if t["key"]:
            cmd += ["--key", t["key"]]
        if stream:
            cmd.append("--stream")
        load0 = loadavg()
        out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise RuntimeError(f"loadgen failed for {target}: {out.stderr[-2000:]}")
        result = json.loads(out.stdout)
        result.update(target=target, server=t["server"], round=round_, loadavg_before=load0, loadavg_after=loadavg())
        self.results.append(result)
        lat = result.get("latency_ms", {})
        log(f"r{round_} {target:24s} {'stream' if stream else 'json  '} c={concurrency:<3d} "
            f"{result['throughput_rps']:8.1f} req/s p50 {lat.get('p50')} p99 {lat.get('p99')} ms "
            f"cpu {result.get('target_cpu_ms_per_req')} ms/req errors {result['errors']}")
        return result

    def grid(self, targets: list[str], modes: list[bool], concs: list[int], round_: int,
             only_at: dict[str, list[int]] | None = None) -> None:
        """Measure every target in each cell (mode, concurrency) back to back; even rounds go through the targets
        in reverse, so that a drift of the machine's load within a cell falls on each target alike. `only_at`
        limits a target to some concurrencies."""
        order = targets if round_ % 2 else targets[::-1]
        for stream in modes:
            for c in concs:
                for target in order:
                    if only_at is None or target not in only_at or c in only_at[target]:
                        self.measure(target, stream, c, round_)


def environment() -> dict:
    cpu = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    versions = {}
    from importlib.metadata import PackageNotFoundError, version
    for pkg in ("Django", "channels", "daphne", "Twisted", "uvicorn", "uvloop", "httpx", "httpx-aiohttp", "aiohttp",
                "orjson"):
        try:
            versions[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    from bench import peer_litellm
    if peer_litellm.version():
        versions["litellm (.venv-litellm)"] = peer_litellm.version()
    return {"nproc": os.cpu_count(), "cpu_model": cpu, "python": platform.python_version(),
            "platform": platform.platform(), "packages": versions, "hostname": socket.gethostname()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__)
    parser.add_argument("--peer", action="store_true", help="measure the LiteLLM proxy instead of the floor/uvicorn")
    parser.add_argument("--duration", type=float, default=3.0, help="measured seconds per configuration")
    parser.add_argument("--warmup", type=float, default=0.5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--concurrency", default="1,10,50")
    parser.add_argument("--feature-concurrency", default="50",
                        help="where the per-feature and --gateway-before gateways are measured")
    parser.add_argument("--feature-rounds", type=int, default=2,
                        help="extra rounds, after the grid, of the floor and every gateway at --feature-concurrency "
                             "(the per-feature table takes the median of all rounds)")
    parser.add_argument("--gateway-before", type=Path, default=None, metavar="CHECKOUT",
                        help="also run the gateway of this checkout (a git worktree at an earlier commit) side by side")
    parser.add_argument("--gateway-after", type=Path, default=None, metavar="CHECKOUT",
                        help="run the gateway of this checkout as the shipped one (implies --no-features, no uvicorn, "
                             "no docs): with --gateway-before, two earlier commits compared")
    parser.add_argument("--no-features", action="store_true", help="only the shipped gateway (the grid as before)")
    parser.add_argument("--quick", action="store_true",
                        help="one round of 2 s at c=1 and 50, no uvicorn, no docs: for iterating")
    parser.add_argument("--no-docs", action="store_true", help="write only the JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.duration, args.concurrency, args.feature_concurrency = 1, 2.0, "1,50", "50"
        args.feature_rounds = 1
        args.no_docs = True
    if args.gateway_after:
        args.no_features = args.no_docs = True
    concs = [int(c) for c in args.concurrency.split(",")]
    feature_concs = [int(c) for c in args.feature_concurrency.split(",")]
    started = time.monotonic()
    OUT.mkdir(exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="inferbase-bench-"))
    bench = Bench(args, tmp)
    command = "make bench-peer" if args.peer else "make bench-gateway" + (
        f" BEFORE={args.gateway_before}" if args.gateway_before else "")
    extra_proc = None
    try:
        log("starting the simulated upstream, the gateway" + (" and LiteLLM" if args.peer else " and the floor"))
        bench.start_upstream()
        bench.start_gateway(args.gateway_after.resolve() if args.gateway_after else REPO)
        if args.peer:
            extra_proc = bench.start_litellm()
            targets = ["direct", "gateway-pinned"] + (["litellm"] if "litellm" in bench.targets else [])
        else:
            bench.start_floor()
            targets = ["direct", "floor", "gateway-pinned", "gateway-auto"]
            if not args.no_features:
                log("starting the per-feature gateways" + (f" and {args.gateway_before}'s" if args.gateway_before else ""))
                bench.start_feature_gateways(args.gateway_before.resolve() if args.gateway_before else None)
            elif args.gateway_before:
                bench._before(args.gateway_before.resolve())
            targets += [t for t in (*FEATURE_OFF, LIMITED, "before-pinned", "before-auto") if t in bench.targets]
        only_at = {t: feature_concs for t in targets if t not in ("direct", "floor", "gateway-pinned", "gateway-auto")}
        for r in range(1, args.rounds + 1):
            bench.grid(targets, [False, True], concs, r, only_at)
        if only_at and args.feature_rounds:
            log(f"{args.feature_rounds} more rounds of the floor and the gateways at c={args.feature_concurrency}")
            for r in range(args.rounds + 1, args.rounds + args.feature_rounds + 1):
                bench.grid([t for t in targets if t != "direct"], [False, True], feature_concs, r)
        if not args.peer and not args.quick and not args.gateway_after:
            log("gateway under uvicorn: non-streamed pinned and auto at c=50")
            proc = bench.start_uvicorn_gateway()
            for r in range(1, args.rounds + 1):
                bench.grid(["gateway-uvicorn-pinned", "gateway-uvicorn-auto"], [False], [max(concs)], r)
            stop(proc)
        gateway_log = "".join(g.logs() for g in bench.gateways)
    finally:
        stop(extra_proc)
        for gateway in bench.gateways:
            stop_live_gateway(gateway)
        for proc in bench.procs:
            stop(proc)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    payload = {
        "command": command, "argv": sys.argv[1:], "timestamp": stamp, "environment": environment(),
        "workload": {"tokens": TOKENS, "content_chunks_per_stream": TOKENS // 4, "pinned_model": PINNED,
                     "duration_s": args.duration, "warmup_s": args.warmup, "rounds": args.rounds,
                     "concurrency": concs, "feature_concurrency": feature_concs,
                     "feature_rounds": args.feature_rounds if any(r["round"] > args.rounds for r in bench.results) else 0},
        "targets": {name: {k: v for k, v in t.items() if k in ("server", "model")} for name, t in bench.targets.items()},
        "before_commit": bench.before_commit,
        "after_checkout": str(args.gateway_after.resolve()) if args.gateway_after else None,
        "results": bench.results,
        "gateway_log_errors": [line for line in gateway_log.splitlines()
                               if any(w in line for w in ("ERROR", "Traceback", "WARNING", "Error"))][:50],
        "litellm_failure": getattr(bench, "litellm_failure", None),
        "wall_seconds": round(time.monotonic() - started, 1),
    }
    path = OUT / f"results-{stamp}.json"
    path.write_text(json.dumps(payload, indent=1))
    log(f"wrote {path.relative_to(REPO)} ({payload['wall_seconds']} s)")
    if not args.no_docs:
        from bench.chart import write_docs
        write_docs(path)
        log(f"updated {DOC.relative_to(REPO)}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
