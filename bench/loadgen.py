"""Closed-loop load generator, run in its own process: C workers over keep-alive aiohttp connections send the
same chat-completions request back to back for a warm-up, then for a measured window; prints one JSON object.

    python -m bench.loadgen --url http://127.0.0.1:8000/api/v1/inference/chat/completions --key K \
        --model auto --concurrency 50 --duration 4 [--stream] [--pid 1234]

With --pid, the target process's CPU (utime+stime from /proc/<pid>/stat, children included via the
process tree given; the first process's main thread and other threads apart, from /proc/<pid>/task) and memory (VmRSS/VmHWM from /proc/<pid>/status) are read around the measured window."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time

import aiohttp

CLK_TCK = os.sysconf("SC_CLK_TCK")
CONTENT_RE = re.compile(rb'"content": ?"[^"]')  # first non-empty content delta
ERROR_RE = re.compile(rb'"object": ?"error"')


def cpu_seconds(pid: int) -> float:
    """utime+stime of one process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        fields = fh.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # fields 14 and 15 of stat(5)


def thread_cpu_seconds(pid: int) -> dict[int, float]:
    """utime+stime of each thread of a process (by thread id; the main thread's id is the pid)."""
    out: dict[int, float] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            out[int(tid)] = (int(fields[11]) + int(fields[12])) / CLK_TCK
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended meanwhile
    return out


def memory_kib(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1])
    return out


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    k = (len(s) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


class Stats:
    def __init__(self) -> None:
        self.latency: list[float] = []
        self.ttft: list[float] = []
        self.errors: dict[str, int] = {}
        self.samples: list[str] = []

    def error(self, kind: str, detail: str = "") -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1
        if detail and len(self.samples) < 5:
            self.samples.append(f"{kind}: {detail[:300]}")


async def one(session: aiohttp.ClientSession, url: str, headers: dict[str, str], body: bytes, stream: bool,
              stats: Stats | None) -> None:
    t0 = time.perf_counter()
    ttft = None
    try:
        async with session.post(url, data=body, headers=headers) as resp:
            if not stream:
                data = await resp.read()
                t1 = time.perf_counter()
                if resp.status != 200:
                    if stats is not None:
                        stats.error(f"http_{resp.status}", data.decode(errors="replace"))
                    return
                if stats is not None:
                    stats.latency.append(t1 - t0)
                return
            tail = b""
            failed = resp.status != 200
            async for chunk in resp.content.iter_any():
                if ttft is None and CONTENT_RE.search(tail[-16:] + chunk):
                    ttft = time.perf_counter() - t0
                tail = (tail + chunk)[-4096:] if failed else chunk
                if ERROR_RE.search(chunk):
                    failed = True
            t1 = time.perf_counter()
            if stats is None:
                return
            if resp.status != 200:
                stats.error(f"http_{resp.status}", tail.decode(errors="replace"))
            elif failed:
                stats.error("stream_error_event", tail.decode(errors="replace"))
            elif b"[DONE]" not in tail:
                stats.error("stream_no_done", tail[-300:].decode(errors="replace"))
            else:
                stats.latency.append(t1 - t0)
                if ttft is not None:
                    stats.ttft.append(ttft)
                else:
                    stats.error("stream_no_content")
    except (TimeoutError, aiohttp.ClientError, OSError) as exc:
        if stats is not None:
            stats.error(type(exc).__name__, str(exc))


async def run(args: argparse.Namespace) -> dict:
    prompt = f"{args.prompt} [sim:tokens={args.tokens}]"
    payload = {"model": args.model, "messages": [{"role": "user", "content": prompt}], "max_tokens": 512}
    if args.stream:
        payload["stream"] = True
    body = json.dumps(payload).encode()
    headers = {"Content-Type": "application/json"}
    if args.key:
        headers["Authorization"] = f"Bearer {args.key}"
    connector = aiohttp.TCPConnector(limit=args.concurrency, force_close=False, keepalive_timeout=60)
    timeout = aiohttp.ClientTimeout(total=60)
    pids = [int(p) for p in args.pid.split(",")] if args.pid else []
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        phase: dict[str, Stats | None] = {"stats": None}
        stop = asyncio.Event()

        inflight = {"n": 0}
        sent = {"n": 0}

        async def worker() -> None:
            while not stop.is_set():
                inflight["n"] += 1
                sent["n"] += 1
                try:
                    await one(session, args.url, headers, body, args.stream, phase["stats"])
                finally:
                    inflight["n"] -= 1

        tasks = [asyncio.create_task(worker()) for _ in range(args.concurrency)]
        await asyncio.sleep(args.warmup)
        stats = Stats()
        cpu0 = {p: cpu_seconds(p) for p in pids}
        threads0 = thread_cpu_seconds(pids[0]) if pids else {}
        self0 = time.process_time()
        t0 = time.perf_counter()
        phase["stats"] = stats
        await asyncio.sleep(args.duration)
        phase["stats"] = None  # requests still in flight finish unrecorded
        elapsed = time.perf_counter() - t0
        cpu1 = {p: cpu_seconds(p) for p in pids}
        threads1 = thread_cpu_seconds(pids[0]) if pids else {}
        self1 = time.process_time()
        stop.set()
        stuck = inflight["n"]
        _, pending = await asyncio.wait(tasks, timeout=args.grace)
        for task in pending:  # a target that stopped answering: do not wait for the client timeout
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    done = len(stats.latency)
    result = {
        "url": args.url, "model": args.model, "stream": args.stream, "concurrency": args.concurrency,
        "duration_s": round(elapsed, 3), "requests": done, "throughput_rps": round(done / elapsed, 2),
        "errors": sum(stats.errors.values()), "error_kinds": stats.errors,
        "in_flight_at_end": stuck, "unfinished_after_grace": len(pending), "error_samples": stats.samples,
        "sent": sent["n"],  # every request started, warm-up and tail included
        "loadgen_cpu_s": round(self1 - self0, 3),
    }
    for name, values in (("latency_ms", stats.latency), ("ttft_ms", stats.ttft)):
        if values:
            result[name] = {f"p{int(q * 100)}": round(percentile(values, q) * 1000, 3) for q in (0.5, 0.9, 0.99)}
            result[name]["mean"] = round(sum(values) / len(values) * 1000, 3)
    if pids:
        cpu = sum(cpu1[p] - cpu0[p] for p in pids)
        result["target_cpu_s"] = round(cpu, 3)
        # CPU per request counts the requests that completed in the window (in-flight work at the edges
        # cancels out on average in a closed loop).
        result["target_cpu_ms_per_req"] = round(cpu * 1000 / done, 3) if done else None
        result["target_cpu_util"] = round(cpu / elapsed, 3)
        # The first target process's main thread (its event loop: the request path) against its other threads
        # (the gateway's log writer, thread pools); threads that ended within the window are missed.
        main = threads1.get(pids[0], 0.0) - threads0.get(pids[0], 0.0)
        result["target_main_thread_cpu_ms_per_req"] = round(main * 1000 / done, 3) if done else None
        result["target_other_threads_cpu_ms_per_req"] = round(
            sum(v - threads0.get(t, 0.0) for t, v in threads1.items() if t != pids[0]) * 1000 / done, 3) if done else None
        mem = [memory_kib(p) for p in pids]
        result["target_rss_kib"] = sum(m.get("VmRSS", 0) for m in mem)
        result["target_hwm_kib"] = sum(m.get("VmHWM", 0) for m in mem)
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.loadgen", description=__doc__)
    parser.add_argument("--url", required=True)
    parser.add_argument("--key", default="")
    parser.add_argument("--model", default="meta-llama-3.3-70b")
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--duration", type=float, default=4.0)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--tokens", type=int, default=80, help="answer length; 80 tokens = 20 content chunks")
    parser.add_argument("--prompt", default="What is machine learning?")
    parser.add_argument("--grace", type=float, default=5.0, help="seconds to let in-flight requests finish")
    parser.add_argument("--pid", default="", help="comma-separated pids whose CPU and memory to measure")
    args = parser.parse_args(argv)
    json.dump(asyncio.run(run(args)), sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
