"""Gateway overhead benchmark: one run measures the same workload direct to the upstream, through the floor
(a bare Channels consumer), through the gateway (pinned and auto, daphne; uvicorn for one set) and, with
--peer, through a LiteLLM proxy. Writes bench-out/results-<timestamp>.json and the tables in docs/benchmarks.md.

    .venv/bin/python -m bench.run            # make bench-gateway
    .venv/bin/python -m bench.run --peer     # make bench-peer (needs .venv-litellm)

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
from datetime import UTC, datetime
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.live import free_port, start_live_gateway, stop_live_gateway, stop_process  # noqa: E402

OUT = REPO / "bench-out"
DOC = REPO / "docs" / "benchmarks.md"
PINNED = "meta-llama-3.3-70b"
TOKENS = 80  # the simulated upstream streams 4 tokens per chunk: 80 tokens = 20 content chunks
CHAT = "/api/v1/inference/chat/completions"


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
        self.gateway = None

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

    def start_gateway(self) -> None:
        self.gateway = start_live_gateway(self.tmp, INFERBASE_SIMULATED_URL=self.upstream,
                                          INFERBASE_SIMULATED_MOUNT="false", INFERBASE_SNAPSHOT_CHECK_SECONDS="1.0")
        for mode, model in (("gateway-pinned", PINNED), ("gateway-auto", "auto")):
            self.targets[mode] = {"url": self.gateway.base_url + CHAT, "pid": self.gateway.process.pid,
                                  "key": self.gateway.api_key, "model": model, "server": "daphne"}

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

    def grid(self, targets: list[str], modes: list[bool], concs: list[int], round_: int) -> None:
        for stream in modes:
            for c in concs:
                for target in targets:
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
    parser.add_argument("--no-docs", action="store_true", help="write only the JSON")
    args = parser.parse_args(argv)
    concs = [int(c) for c in args.concurrency.split(",")]
    started = time.monotonic()
    OUT.mkdir(exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="inferbase-bench-"))
    bench = Bench(args, tmp)
    command = "make bench-peer" if args.peer else "make bench-gateway"
    extra_proc = None
    try:
        log("starting the simulated upstream, the gateway" + (" and LiteLLM" if args.peer else " and the floor"))
        bench.start_upstream()
        bench.start_gateway()
        if args.peer:
            extra_proc = bench.start_litellm()
            targets = ["direct", "gateway-pinned"] + (["litellm"] if "litellm" in bench.targets else [])
        else:
            bench.start_floor()
            targets = ["direct", "floor", "gateway-pinned", "gateway-auto"]
        for r in range(1, args.rounds + 1):
            bench.grid(targets, [False, True], concs, r)
        if not args.peer:
            log("gateway under uvicorn: non-streamed pinned and auto at c=50")
            proc = bench.start_uvicorn_gateway()
            for r in range(1, args.rounds + 1):
                bench.grid(["gateway-uvicorn-pinned", "gateway-uvicorn-auto"], [False], [max(concs)], r)
            stop(proc)
        gateway_log = bench.gateway.logs() if bench.gateway else ""
    finally:
        stop(extra_proc)
        if bench.gateway is not None:
            stop_live_gateway(bench.gateway)
        for proc in bench.procs:
            stop(proc)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    payload = {
        "command": command, "argv": sys.argv[1:], "timestamp": stamp, "environment": environment(),
        "workload": {"tokens": TOKENS, "content_chunks_per_stream": TOKENS // 4, "pinned_model": PINNED,
                     "duration_s": args.duration, "warmup_s": args.warmup, "rounds": args.rounds,
                     "concurrency": concs},
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
