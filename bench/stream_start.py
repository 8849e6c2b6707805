"""What holding a stream's start costs (issue 16, item 4): time to the first byte and to the first content.

A streamed response's headers and routing event wait for the first upstream chunk (or the keepalive interval),
so that a chain failing before then is answered with its HTTP status. This measures, one client at a time,
against a simulated upstream that takes `--upstream-ttft-ms` to answer:

- direct: the simulated upstream itself;
- held: the gateway as shipped (keepalive interval 15 s: the start is held until the first chunk);
- early: the same gateway with a keepalive interval of `--early-interval` s, so the stream starts (headers,
  routing event) that long after the decision, as every stream did before the hold, then `: processing`
  until the first chunk.

Per request: response headers, the first body bytes and the first content delta, from the request's start.
The configurations alternate request by request, so drift on a shared machine lands on all of them alike.

    .venv/bin/python -m bench.stream_start [--requests 60] [--upstream-ttft-ms 200]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from bench.loadgen import percentile  # noqa: E402
from tests.live import start_live_gateway, start_simulated, stop_live_gateway  # noqa: E402

CHAT = "/api/v1/inference/chat/completions"
PINNED = "meta-llama-3.3-70b"
CONTENT = re.compile(rb'"content": ?"[^"]')  # the first non-empty content delta


def one(client: httpx.Client, url: str, body: dict, headers: dict[str, str]) -> tuple[float, float, float]:
    """Return milliseconds from the request's start to the headers, the first body bytes, the first content."""
    started = time.perf_counter()
    first_byte = first_content = None
    tail = b""
    with client.stream("POST", url, json=body, headers=headers) as response:
        got_headers = time.perf_counter()
        response.raise_for_status()
        for data in response.iter_raw():
            now = time.perf_counter()
            if first_byte is None and data:
                first_byte = now
            if first_content is None and CONTENT.search(tail + data):
                first_content = now
            tail = data[-32:]
    if first_byte is None or first_content is None:
        raise RuntimeError(f"{url}: no content in the stream")
    return tuple((t - started) * 1000 for t in (got_headers, first_byte, first_content))  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=60, help="measured requests per configuration")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--upstream-ttft-ms", type=int, default=200)
    parser.add_argument("--early-interval", type=float, default=0.01,
                        help="the early-start gateway's keepalive interval, seconds (the settings' minimum)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="inferbase-stream-start-") as tmp_name:
        tmp = Path(tmp_name)
        upstream = start_simulated(tmp)
        base = upstream.base_url
        gateways = []
        try:
            common = {"INFERBASE_SIMULATED_URL": base, "INFERBASE_SIMULATED_MOUNT": "false"}
            held = start_live_gateway(tmp, **common)
            gateways.append(held)
            early = start_live_gateway(tmp, **common, INFERBASE_STREAM_KEEPALIVE_SECONDS=str(args.early_interval))
            gateways.append(early)
            prompt = f"Write a haiku about routers [sim:stall_ms={args.upstream_ttft_ms}] [sim:tokens=80]"
            messages = [{"role": "user", "content": prompt}]
            targets = {
                "direct": (f"{base}/openai/v1/chat/completions", {"model": PINNED}, {}),
                "held": (held.base_url + CHAT, {"model": PINNED},
                         {"Authorization": f"Bearer {held.api_key}"}),
                "early": (early.base_url + CHAT, {"model": PINNED},
                          {"Authorization": f"Bearer {early.api_key}"}),
            }
            results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in targets}
            with httpx.Client(timeout=30) as client:
                for i in range(args.warmup + args.requests):
                    for name, (url, extra, headers) in targets.items():
                        figures = one(client, url, {**extra, "messages": messages, "stream": True}, headers)
                        if i >= args.warmup:
                            results[name].append(figures)
        finally:
            for gateway in gateways:
                stop_live_gateway(gateway)
            upstream.stop()

    print(f"{args.requests} streamed requests per configuration, one at a time, alternating; upstream first "
          f"chunk after {args.upstream_ttft_ms} ms; early start after {args.early_interval * 1000:.0f} ms")
    print("| configuration | headers p50 / p90 ms | first byte p50 / p90 ms | first content p50 / p90 ms |")
    print("|---|---|---|---|")
    for name, rows in results.items():
        cells = []
        for column in range(3):
            values = [row[column] for row in rows]
            cells.append(f"{percentile(values, 0.5):.1f} / {percentile(values, 0.9):.1f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    for name in ("held", "early"):
        added = [g[2] - d[2] for g, d in zip(results[name], results["direct"], strict=True)]
        gap = [g[2] - g[1] for g in results[name]]
        print(f"{name}: first content − direct's, paired, p50 {percentile(added, 0.5):+.1f} ms, "
              f"p90 {percentile(added, 0.9):+.1f} ms; first content − first byte p50 {percentile(gap, 0.5):.1f} ms, "
              f"max {max(gap):.1f} ms")
    paired = [h[2] - e[2] for h, e in zip(results["held"], results["early"], strict=True)]
    print(f"held − early, first content, paired: p50 {percentile(paired, 0.5):+.1f} ms, "
          f"p10 {percentile(paired, 0.1):+.1f}, p90 {percentile(paired, 0.9):+.1f} ms")


if __name__ == "__main__":
    main()
