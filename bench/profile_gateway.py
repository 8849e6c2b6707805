"""Where a gateway's main thread spends its CPU: a gateway from a checkout (this one, or another given with
--checkout) runs under cProfile, the load generator sends it a fixed load, and the gateway is stopped with
a profile of the middle of the load (bench/profiled_daphne.py: on and off by signals, start-up left out). Prints the top functions by own time, per request, and own time summed by
package, so two checkouts can be compared line by line.

    .venv/bin/python -m bench.profile_gateway [--checkout ../before] [--stream] [--concurrency 10] [--duration 10]
    .venv/bin/python -m bench.profile_gateway --compare after.prof before.prof   # calls per request, side by side

cProfile sees the main thread (daphne's reactor and the event loop: the request path) and, separately, the
batches the log writer's thread stores (per record). Profiling slows every call, so compare the shares and the per-request figures of two
checkouts measured the same way, not the absolute times with `make bench-gateway`'s."""

from __future__ import annotations

import argparse
import json
import pstats
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.run import CHAT, PINNED, TOKENS, Bench, wait_http  # noqa: E402
from tests.live import free_port, poll, stop_process  # noqa: E402


def package_of(filename: str, checkout: Path) -> str:
    """Return a short owner of a file: our top-level package (gateway, api, routing, ...) or the library."""
    if filename.startswith("~") or filename.startswith("<"):
        return "builtins"
    path = Path(filename)
    try:
        parts = path.resolve().relative_to(checkout).parts
        return "/".join(parts[:2]) if parts[0] == "inferbase" else parts[0]
    except ValueError:
        pass
    if "site-packages" in path.parts:
        return path.parts[path.parts.index("site-packages") + 1]
    return "stdlib"


OUR_PACKAGES = {"inferbase", "providers", "routing", "billing", "observability"}


def requests_in(stats: dict) -> int:
    """Requests served while profiled: the request parser runs once per request, in every checkout so far."""
    return sum(v[1] for (filename, _, name), v in stats.items()
               if filename.endswith("inferbase/api/validation.py") and name == "chat_request_parse")


def _where(key: tuple[str, int, str]) -> str:
    filename, _, name = key
    if "site-packages/" in filename:
        filename = filename.split("site-packages/", 1)[1]
    else:  # our packages, whichever checkout they were loaded from
        parts = Path(filename).parts
        ours = [i for i, part in enumerate(parts) if part in OUR_PACKAGES]
        if ours:
            filename = "/".join(parts[ours[0]:])
    return f"{filename}:{name}"


def compare(after: Path, before: Path, top: int) -> None:
    """Print the calls per request each profile makes, and the functions whose calls per request differ most."""
    a, b = pstats.Stats(str(after)).stats, pstats.Stats(str(before)).stats
    na, nb = requests_in(a), requests_in(b)
    calls_a: dict[str, float] = defaultdict(float)
    calls_b: dict[str, float] = defaultdict(float)
    for key, v in a.items():
        calls_a[_where(key)] += v[1] / na
    for key, v in b.items():
        calls_b[_where(key)] += v[1] / nb
    print(f"function calls per request: {sum(calls_a.values()):.0f} ({after}) against {sum(calls_b.values()):.0f} "
          f"({before}), {sum(calls_a.values()) / sum(calls_b.values()) - 1:+.1%}")
    print("most added calls per request:")
    for name in sorted(set(calls_a) | set(calls_b), key=lambda n: -(calls_a.get(n, 0) - calls_b.get(n, 0)))[:top]:
        print(f"  {calls_a.get(name, 0) - calls_b.get(name, 0):+7.1f}  ({calls_a.get(name, 0):6.1f} against "
              f"{calls_b.get(name, 0):6.1f})  {name}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.profile_gateway", description=__doc__)
    parser.add_argument("--checkout", type=Path, default=REPO)
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--model", default=PINNED)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("AFTER.prof", "BEFORE.prof"),
                        help="compare two profiles written by earlier runs (calls per request: the machine's load "
                             "moves the times of two runs, not their calls) and exit")
    args = parser.parse_args(argv)
    if args.compare:
        compare(*args.compare, args.top)
        return
    checkout = args.checkout.resolve()
    tmp = Path(tempfile.mkdtemp(prefix="inferbase-profile-"))
    bench = Bench(argparse.Namespace(duration=args.duration, warmup=1.0), tmp)
    out = tmp / "gateway.prof"
    try:
        bench.start_upstream()
        gateway = bench._live(repo=checkout, INFERBASE_SCHEDULER="true")  # started to migrate and make a key
        stop_process(gateway.process)  # restarted under the profiler, on the same database
        port = free_port()
        env = {**gateway.env, "PORT": str(port)}
        with (tmp / "profiled.log").open("wb") as log:
            proc = subprocess.Popen([sys.executable, str(REPO / "bench" / "profiled_daphne.py"), str(out), "-b",
                                     "127.0.0.1", "-p", str(port), "inferbase.asgi:application"],
                                    cwd=checkout, env={**env, "PYTHONPATH": str(checkout)}, stdout=log,
                                    stderr=subprocess.STDOUT)
        bench.procs.append(proc)
        wait_http(f"http://127.0.0.1:{port}/api/v1/models", proc)
        cmd = [sys.executable, "-m", "bench.loadgen", "--url", f"http://127.0.0.1:{port}{CHAT}", "--key",
               gateway.api_key, "--model", args.model, "--concurrency", str(args.concurrency), "--duration",
               str(args.duration), "--warmup", "1", "--tokens", str(TOKENS), "--pid", str(proc.pid)]
        if args.stream:
            cmd.append("--stream")
        loadgen = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, text=True)
        time.sleep(1.5)  # past the load generator's warm-up
        proc.send_signal(signal.SIGUSR1)
        time.sleep(args.duration - 1.0)
        proc.send_signal(signal.SIGUSR2)
        result = json.loads(loadgen.communicate(timeout=120)[0])
        poll(out.exists, timeout=30)
        stop_process(proc)
    finally:
        for p in bench.procs:
            stop_process(p)
        for g in bench.gateways:
            g.process = None
    stats = pstats.Stats(str(out))
    sent = requests_in(stats.stats)
    print(f"profile: {out}")
    total = sum(v[2] for v in stats.stats.values())  # own time of every function
    print(f"checkout {checkout}: {sent} requests while profiled ({result['throughput_rps']} req/s over the load "
          f"generator's window), main thread own time {total * 1000 / sent:.3f} ms/request under the profiler")
    by_package: dict[str, float] = defaultdict(float)
    for (filename, _, _), (_, _, tt, _, _) in stats.stats.items():
        by_package[package_of(filename, checkout)] += tt
    print("\nown time by package, µs per request:")
    for name, tt in sorted(by_package.items(), key=lambda kv: -kv[1])[:20]:
        print(f"  {tt * 1e6 / sent:8.1f}  {name}")
    print(f"\ntop {args.top} functions by own time, µs per request (calls per request):")
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:args.top]
    for (filename, line, func), (_, nc, tt, _, _) in rows:
        short = filename.replace(str(checkout) + "/", "")
        if "site-packages/" in short:
            short = short.split("site-packages/", 1)[1]
        print(f"  {tt * 1e6 / sent:8.1f}  ({nc / sent:5.1f})  {short}:{line} {func}")
    writer = Path(str(out) + ".writer")
    if writer.exists() and Path(str(out) + ".records").exists():
        stored = int(Path(str(out) + ".records").read_text() or 0)
        wstats = pstats.Stats(str(writer))
        wtotal = sum(v[2] for v in wstats.stats.values())
        print(f"\nlog writer's thread (RecordStore.__call__): {stored} records, own time "
              f"{wtotal * 1000 / max(stored, 1):.3f} ms/record under the profiler")
        inclusive = sorted(wstats.stats.items(), key=lambda kv: -kv[1][3])[:args.top]
        print(f"top {args.top} functions by inclusive time, µs per record (calls per record):")
        for (filename, line, func), (_, nc, _, ct, _) in inclusive:
            short = filename.replace(str(checkout) + "/", "")
            if "site-packages/" in short:
                short = short.split("site-packages/", 1)[1]
            print(f"  {ct * 1e6 / max(stored, 1):8.1f}  ({nc / max(stored, 1):5.2f})  {short}:{line} {func}")


if __name__ == "__main__":
    main()
