"""Tables and chart from bench-out/results-*.json: the "Gateway overhead" and "LiteLLM peer" sections of
docs/benchmarks.md and docs/bench-latency.svg (a hand-written SVG: no plotting dependency).

    .venv/bin/python -m bench.chart bench-out/results-<timestamp>.json   # re-render from a results file"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from statistics import mean, median

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "benchmarks.md"
SVG = REPO / "docs" / "bench-latency.svg"
OUT = REPO / "bench-out"
ORDER = ["direct", "floor", "gateway-pinned", "gateway-auto", "gateway-uvicorn-pinned", "gateway-uvicorn-auto", "litellm"]
# The per-feature gateways and the other checkout's (tables only; the chart keeps to ORDER).
FEATURES = {"gateway-pinned-no-samples": "route samples off", "gateway-pinned-no-tail": "live tail off",
            "gateway-pinned-limits-guardrails": "rpm/tpm limits + PII checks in and out"}
TABLE_ORDER = [*ORDER[:4], *FEATURES, "before-pinned", "before-auto", *ORDER[4:]]
COLORS = {"direct": "#888888", "floor": "#4c9be8", "gateway-pinned": "#2ca02c", "gateway-auto": "#98df8a",
          "gateway-uvicorn-pinned": "#9467bd", "gateway-uvicorn-auto": "#c5b0d5", "litellm": "#d62728"}


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def grouped(results: list[dict]) -> dict[tuple, list[dict]]:
    g: dict[tuple, list[dict]] = defaultdict(list)
    for r in results:
        g[(r["target"], r["stream"], r["concurrency"])].append(r)
    return g


def avg(rows: list[dict], *keys: str) -> float | None:
    vals = []
    for r in rows:
        v = r
        for k in keys:
            v = v.get(k) if isinstance(v, dict) else None
        if v is not None:
            vals.append(v)
    return mean(vals) if vals else None


def mid_cpu(rows: list[dict], key: str = "target_cpu_ms_per_req") -> float | None:
    """The median CPU per request of the runs: the machine is shared, and one disturbed run moves a mean."""
    vals = [r[key] for r in rows if r.get(key)]
    return median(vals) if vals else None


def per_round(rows: list[dict], *keys: str, fmt: str = "{:.1f}") -> str:
    out = []
    for r in sorted(rows, key=lambda r: r["round"]):
        v = r
        for k in keys:
            v = v.get(k) if isinstance(v, dict) else None
        out.append("–" if v is None else fmt.format(v))
    return " / ".join(out)


def f(v: float | None, fmt: str = "{:.1f}") -> str:
    return "–" if v is None else fmt.format(v)


def table(data: dict) -> list[str]:
    g = grouped(data["results"])
    lines = [
        "| mode | c | target | req/s (run 1 / 2) | p50 ms (1 / 2) | p90 | p99 | added p50 / p90 / p99 ms | "
        "TTFT p50 ms (added) | errors | CPU ms/req (1 / 2) | CPU × floor | peak RSS MiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    keys = sorted(g, key=lambda k: (k[1], k[2], TABLE_ORDER.index(k[0]) if k[0] in TABLE_ORDER else 99))
    for target, stream, c in keys:
        rows = g[(target, stream, c)]
        direct = g.get(("direct", stream, c), [])
        floor = g.get(("floor", stream, c), [])
        added = "–"
        if target != "direct" and direct:
            parts = [avg(rows, "latency_ms", p) - avg(direct, "latency_ms", p) for p in ("p50", "p90", "p99")
                     if avg(rows, "latency_ms", p) is not None]
            added = " / ".join(f"{x:+.1f}" for x in parts)
        ttft = "–"
        if stream and avg(rows, "ttft_ms", "p50") is not None:
            ttft = f(avg(rows, "ttft_ms", "p50"))
            if target != "direct" and direct and avg(direct, "ttft_ms", "p50") is not None:
                ttft += f" ({avg(rows, 'ttft_ms', 'p50') - avg(direct, 'ttft_ms', 'p50'):+.1f})"
        ratio = "–"
        cpu = mid_cpu(rows)
        fcpu = mid_cpu(floor)
        if target not in ("direct", "floor") and cpu and fcpu:
            ratio = f"{cpu / fcpu:.2f}×"
        hwm = max((r.get("target_hwm_kib", 0) for r in rows), default=0) / 1024
        errors = sum(r["errors"] for r in rows)
        kinds: dict[str, int] = defaultdict(int)
        for r in rows:
            for k, n in r.get("error_kinds", {}).items():
                kinds[k] += n
        err = str(errors) + (" (" + ", ".join(f"{k}×{n}" for k, n in kinds.items()) + ")" if kinds else "")
        stalled = [r for r in rows if r["requests"] == 0]
        if stalled:
            err += f"; **no answer** in {len(stalled)} run(s): 0 completed, " + ", ".join(
                str(r.get("in_flight_at_end", "?")) for r in stalled) + " in flight"
        lines.append(
            f"| {'stream' if stream else 'json'} | {c} | {target} | {per_round(rows, 'throughput_rps')} | "
            f"{per_round(rows, 'latency_ms', 'p50')} | {f(avg(rows, 'latency_ms', 'p90'))} | "
            f"{f(avg(rows, 'latency_ms', 'p99'))} | {added} | {ttft} | {err} | "
            f"{per_round(rows, 'target_cpu_ms_per_req', fmt='{:.2f}')} | {ratio} | {hwm:.0f} |")
    return lines


def headline(data: dict) -> list[str]:
    g = grouped(data["results"])
    c = max(data["workload"]["concurrency"])
    out = []

    def cpu(t: str, s: bool = False, cc: int = c) -> float | None:
        return mid_cpu(g.get((t, s, cc), []))

    def rps(t: str, s: bool = False, cc: int = c) -> float | None:
        return avg(g.get((t, s, cc), []), "throughput_rps")

    def p50(t: str, s: bool = False, cc: int = 1) -> float | None:
        return avg(g.get((t, s, cc), []), "latency_ms", "p50")

    fl, pin, aut = cpu("floor"), cpu("gateway-pinned"), cpu("gateway-auto")
    if fl and pin:
        out.append(f"- CPU per non-streamed request at c={c} (median of the runs): floor **{fl:.2f} ms**, gateway pinned "
                   f"**{pin:.2f} ms** ({pin / fl:.2f}× the floor; aim ≤ 1.3×), auto **{f(aut, '{:.2f}')} ms**"
                   + (f" ({aut / fl:.2f}×; auto − pinned {aut - pin:+.2f} ms, aim ≤ +1 ms)." if aut else "."))
    sfl, spin, saut = cpu("floor", True), cpu("gateway-pinned", True), cpu("gateway-auto", True)
    if sfl and spin:
        levels = sorted({cc for (t, s_, cc) in g if s_ and t == "floor"})
        per_c = ", ".join(f"c={cc} {cpu('gateway-pinned', True, cc) / cpu('floor', True, cc):.2f}×"
                          for cc in levels if cpu("floor", True, cc) and cpu("gateway-pinned", True, cc))
        out.append(f"- CPU per streamed request (20 content chunks) at c={c}: floor **{sfl:.2f} ms**, pinned **{spin:.2f} ms** "
                   f"(**{spin / sfl:.2f}×** the floor; aim ≤ 1.3×), auto {f(saut, '{:.2f}')} ms"
                   + (f" ({saut / sfl:.2f}×)" if saut else "") + f". Pinned ÷ floor by concurrency: {per_c}.")

    def ttft(t: str, cc: int = 1) -> float | None:
        return avg(g.get((t, True, cc), []), "ttft_ms", "p50")

    if ttft("floor") is not None and ttft("gateway-pinned") is not None and ttft("direct") is not None:
        fa, ga = ttft("floor") - ttft("direct"), ttft("gateway-pinned") - ttft("direct")
        out.append(f"- Added time to first content token, one client (c=1), p50: floor +{fa:.2f} ms, gateway pinned "
                   f"+{ga:.2f} ms (**{ga / fa:.2f}×** the floor's; aim ≤ 1.5×)"
                   + (f", auto +{ttft('gateway-auto') - ttft('direct'):.2f} ms" if ttft("gateway-auto") is not None else "")
                   + ". Under load the added TTFT is mostly queueing behind the other streams, so it follows throughput.")
    if rps("gateway-pinned"):
        line = (f"- Throughput at c={c}, non-streamed: direct {f(rps('direct'))}, floor {f(rps('floor'))}, gateway "
                f"pinned {f(rps('gateway-pinned'))}, auto {f(rps('gateway-auto'))} req/s")
        if rps("litellm"):
            line += (f", LiteLLM {f(rps('litellm'))} req/s: the gateway serves **{rps('gateway-pinned') / rps('litellm'):.1f}×** "
                     "LiteLLM's throughput, measured side by side in this run (aim ≥ 10×; LiteLLM's CPU per request "
                     f"{f(cpu('litellm'), '{:.1f}')} ms against the gateway's {f(cpu('gateway-pinned'), '{:.2f}')} ms).")
        else:
            line += " (LiteLLM is measured side by side by `make bench-peer`, below)."
        out.append(line)
    if rps("gateway-uvicorn-pinned"):
        out.append(f"- Same under uvicorn: pinned {f(rps('gateway-uvicorn-pinned'))} req/s at "
                   f"{f(cpu('gateway-uvicorn-pinned'), '{:.2f}')} ms CPU/req, auto {f(rps('gateway-uvicorn-auto'))} req/s "
                   f"at {f(cpu('gateway-uvicorn-auto'), '{:.2f}')} ms CPU/req.")
    if p50("gateway-pinned") is not None and p50("direct") is not None:
        out.append(f"- One client (c=1), non-streamed p50: direct {p50('direct'):.2f} ms, floor {f(p50('floor'), '{:.2f}')} ms, "
                   f"gateway pinned {p50('gateway-pinned'):.2f} ms (+{p50('gateway-pinned') - p50('direct'):.2f}), auto "
                   f"{f(p50('gateway-auto'), '{:.2f}')} ms"
                   + (f", LiteLLM {p50('litellm'):.2f} ms (+{p50('litellm') - p50('direct'):.2f})" if p50("litellm") else "")
                   + ".")
    hwm = [r.get("target_hwm_kib", 0) for r in data["results"] if r["target"].startswith("gateway-") and "uvicorn" not in r["target"]]
    if hwm:
        out.append(f"- Gateway (daphne) peak RSS (VmHWM) over the run: {max(hwm) / 1024:.0f} MiB"
                   + (f"; floor {max(r.get('target_hwm_kib', 0) for r in data['results'] if r['target'] == 'floor') / 1024:.0f} MiB"
                      if any(r["target"] == "floor" for r in data["results"]) else "")
                   + (f"; LiteLLM {max(r.get('target_hwm_kib', 0) for r in data['results'] if r['target'] == 'litellm') / 1024:.0f} MiB"
                      if any(r["target"] == "litellm" for r in data["results"]) else "") + ".")
    errs = sum(r["errors"] for r in data["results"])
    out.append(f"- Errors: {errs} over {sum(r['requests'] for r in data['results'])} measured requests."
               + (" Gateway log lines with ERROR/WARNING: " + "; ".join(f"`{x[:160]}`" for x in data["gateway_log_errors"][:5])
                  if data.get("gateway_log_errors") else ""))
    loads = [r["loadavg_before"] for r in data["results"]]
    out.append(f"- 1-minute load average during the run: {min(loads):.1f}–{max(loads):.1f} on {data['environment']['nproc']} "
               "cores (other work shares this machine; read latency and throughput with that in mind, CPU per request "
               "is the process's own accounting and is the steadier number).")
    return out


def features(data: dict) -> list[str]:
    """CPU per request of the shipped gateway against the floor, what each feature adds (shipped − the gateway
    without it, or with it − shipped), and the other checkout's gateway (before) against this one (after)."""
    g = grouped(data["results"])
    cells = sorted({(s, c) for (t, s, c) in g if t in FEATURES or t.startswith("before-")})
    if not cells:
        return []

    def cpu(t: str, s: bool, c: int) -> float | None:
        return mid_cpu(g.get((t, s, c), []))

    rounds = max((len(g[k]) for k in g if k[0] == "gateway-pinned" and (k[1], k[2]) in cells), default=0)
    have_before = any(t.startswith("before-") for t, _, _ in g)
    head = "| mode | c | floor | shipped pinned (× floor) | " + " | ".join(
        f"{label}: CPU (feature's Δ)" for t, label in FEATURES.items() if any(k[0] == t for k in g)) + " |"
    if have_before:
        head += " before pinned | after ÷ before, pinned | shipped auto | before auto | after ÷ before, auto |"
    lines = [f"CPU ms per request, median of the {rounds} runs of each (the grid's and the extra rounds).", "", head, "|" + "---|" * (head.count("|") - 1)]
    for s, c in cells:
        fl, pin = cpu("floor", s, c), cpu("gateway-pinned", s, c)
        row = [("stream" if s else "json"), str(c), f(fl, "{:.2f}"),
               f"{f(pin, '{:.2f}')} ({pin / fl:.2f}×)" if pin and fl else f(pin, "{:.2f}")]
        for t in FEATURES:
            if not any(k[0] == t for k in g):
                continue
            v = cpu(t, s, c)
            if v is None or pin is None:
                row.append(f(v, "{:.2f}"))
                continue
            added = v - pin if t == "gateway-pinned-limits-guardrails" else pin - v  # on − off
            row.append(f"{v:.2f} ({added * 1000:+.0f} µs, {added / pin * 100:+.1f}%)")
        if have_before:
            bp, aut, ba = cpu("before-pinned", s, c), cpu("gateway-auto", s, c), cpu("before-auto", s, c)
            row += [f(bp, "{:.2f}"), f"**{pin / bp:.3f}**" if pin and bp else "–", f(aut, "{:.2f}"), f(ba, "{:.2f}"),
                    f"**{aut / ba:.3f}**" if aut and ba else "–"]
        lines.append("| " + " | ".join(row) + " |")
    threads = [t for t in ("gateway-pinned", *FEATURES, "before-pinned", "gateway-auto", "before-auto")
               if any(k[0] == t for k in g)]
    if any(r.get("target_main_thread_cpu_ms_per_req") for r in data["results"]):
        lines += ["", "The same, split by thread: the main thread (daphne's reactor and the event loop: the request "
                  "path, and in the before checkout its log writer's task) / the other threads (the log writer's "
                  "thread, Django's and asyncio's thread pools), ms per request, medians.", "",
                  "| mode | c | " + " | ".join(threads) + " |", "|" + "---|" * (len(threads) + 2)]
        for s, c in cells:
            lines.append(f"| {'stream' if s else 'json'} | {c} | " + " | ".join(
                f"{f(mid_cpu(g.get((t, s, c), []), 'target_main_thread_cpu_ms_per_req'), '{:.2f}')} / "
                f"{f(mid_cpu(g.get((t, s, c), []), 'target_other_threads_cpu_ms_per_req'), '{:.2f}')}"
                for t in threads) + " |")
    notes = ["", "Each feature's gateway is the shipped one (same code, same default settings, the embedded scheduler "
             "on) with one thing changed; the feature's Δ is the shipped gateway's CPU per request minus that "
             "gateway's (for limits and checks: that gateway's minus the shipped one's), in the same cells of the "
             "same run. Route samples and the live tail run in the log writer's thread, off the request path, but "
             "in the same process, so their CPU counts here."]
    if have_before:
        commit = data.get("before_commit") or "?"
        notes.append("")
        notes.append(f"Before = the gateway of another checkout (commit `{commit}`), on its own database with its "
                     "own defaults, run beside the others under the same load; after = the shipped gateway of this "
                     "run. ÷ = after's CPU per request over before's.")
    return ["### Per feature, and before/after", "", *lines, *notes]


def environment(data: dict) -> list[str]:
    e = data["environment"]
    pk = ", ".join(f"{k} {v}" for k, v in e["packages"].items())
    w = data["workload"]
    return [
        f"Command: `{data['command']}` (`.venv/bin/python -m bench.run{' ' + ' '.join(data['argv']) if data['argv'] else ''}`), "
        f"{data['timestamp']}, {data['wall_seconds']} s wall. Raw results: `bench-out/results-{data['timestamp']}.json`.",
        "",
        f"Machine: {e['nproc']} cores, {e['cpu_model']}; {e['platform']}; Python {e['python']}. Packages: {pk}.",
        "",
        f"Workload: one chat-completions request (`[sim:tokens={w['tokens']}]`, {w['content_chunks_per_stream']} content "
        f"chunks when streamed), closed loop at c = {', '.join(map(str, w['concurrency']))}, {w['warmup_s']} s warm-up then "
        f"{w['duration_s']} s measured per configuration, {w['rounds']} runs of the whole grid (run 1 / run 2 shown)"
        + (f", then {w['feature_rounds']} more of the floor and every gateway at c = "
           f"{', '.join(map(str, w['feature_concurrency']))} (their cells show every run)" if w.get("feature_rounds") else "")
        + ". "
        "Pinned = `meta-llama-3.3-70b`, auto = `model: \"auto\"`. Added latency = target − direct at the same percentile "
        "(means of the runs). CPU ms/req = Δ(utime+stime) of the server process from `/proc/<pid>/stat` over the "
        "measured window ÷ requests completed in it; CPU × floor and the headline's CPU figures are medians of the runs. "
        "Peak RSS = `VmHWM`.",
    ]


def svg(datas: list[dict]) -> str:
    """Left: non-streamed latency percentiles at the highest concurrency; right: throughput by concurrency."""
    results = [r for d in datas for r in d["results"]]
    g = grouped(results)
    c = max(r["concurrency"] for r in results)
    concs = sorted({r["concurrency"] for r in results})
    targets = [t for t in ORDER if any(k[0] == t and not k[1] for k in g)]
    W, H, pad = 980, 420, 60
    pw = (W - 3 * pad) / 2
    ph = H - 2 * pad - 30
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
             '<rect width="100%" height="100%" fill="white"/>']

    def panel(x0: float, title: str, groups: list[str], series: dict[str, list[float | None]], unit: str) -> None:
        vmax = max([v for vs in series.values() for v in vs if v is not None] + [1]) * 1.1
        parts.append(f'<text x="{x0 + pw / 2}" y="{pad - 25}" text-anchor="middle" font-size="13">{title}</text>')
        parts.append(f'<line x1="{x0}" y1="{pad + ph}" x2="{x0 + pw}" y2="{pad + ph}" stroke="black"/>')
        parts.append(f'<line x1="{x0}" y1="{pad}" x2="{x0}" y2="{pad + ph}" stroke="black"/>')
        for i in range(5):
            v = vmax * i / 4
            y = pad + ph - ph * i / 4
            parts.append(f'<text x="{x0 - 5}" y="{y + 4}" text-anchor="end">{v:.0f}</text>')
            parts.append(f'<line x1="{x0}" y1="{y}" x2="{x0 + pw}" y2="{y}" stroke="#eee"/>')
        parts.append(f'<text x="{x0 - 40}" y="{pad + ph / 2}" transform="rotate(-90 {x0 - 40} {pad + ph / 2})" '
                     f'text-anchor="middle">{unit}</text>')
        gw = pw / len(groups)
        n = len(series)
        bw = gw * 0.8 / max(n, 1)
        for gi, gname in enumerate(groups):
            parts.append(f'<text x="{x0 + gw * gi + gw / 2}" y="{pad + ph + 15}" text-anchor="middle">{gname}</text>')
            for si, (sname, vals) in enumerate(series.items()):
                v = vals[gi]
                if v is None:
                    continue
                h = ph * v / vmax
                x = x0 + gw * gi + gw * 0.1 + bw * si
                parts.append(f'<rect x="{x:.1f}" y="{pad + ph - h:.1f}" width="{bw - 1:.1f}" height="{h:.1f}" '
                             f'fill="{COLORS.get(sname, "#333")}"><title>{sname} {gname}: {v:.1f} {unit}</title></rect>')
                parts.append(f'<text x="{x + bw / 2:.1f}" y="{pad + ph - h - 3:.1f}" text-anchor="middle" '
                             f'font-size="8">{v:.0f}</text>')

    lat = {t: [avg(g.get((t, False, c), []), "latency_ms", p) for p in ("p50", "p90", "p99")] for t in targets}
    lat = {t: v for t, v in lat.items() if any(x is not None for x in v)}
    panel(pad, f"Latency, non-streamed, c={c}", ["p50", "p90", "p99"], lat, "ms")
    thr = {t: [avg(g.get((t, False, cc), []), "throughput_rps") for cc in concs] for t in targets}
    panel(2 * pad + pw, "Throughput, non-streamed", [f"c={cc}" for cc in concs], thr, "req/s")
    lx = pad
    for t in targets:
        parts.append(f'<rect x="{lx}" y="{H - 22}" width="10" height="10" fill="{COLORS.get(t, "#333")}"/>')
        parts.append(f'<text x="{lx + 14}" y="{H - 13}">{t}</text>')
        lx += 14 + 7 * len(t) + 18
    parts.append("</svg>")
    return "\n".join(parts)


SKELETON = """# Benchmarks

## Gateway overhead

<!-- BEGIN gateway-overhead (generated by `make bench-gateway`; edits inside are overwritten) -->
<!-- END gateway-overhead -->

## LiteLLM peer

<!-- BEGIN peer (generated by `make bench-peer`; edits inside are overwritten) -->
<!-- END peer -->
"""


def replace_section(doc: str, name: str, body: str) -> str:
    begin = doc.index(f"<!-- BEGIN {name}")
    begin = doc.index("-->", begin) + 3
    end = doc.index(f"<!-- END {name} -->")
    return doc[:begin] + "\n" + body.strip() + "\n" + doc[end:]


def latest(peer: bool) -> Path | None:
    files = sorted(OUT.glob("results-*.json"))
    for p in reversed(files):
        if (load(p)["command"] == "make bench-peer") == peer:
            return p
    return None


def write_docs(path: Path) -> None:
    data = load(path)
    peer = data["command"] == "make bench-peer"
    extra = features(data)
    body = ["### Headline", "", *headline(data), "", *environment(data), "", *extra, *([""] if extra else []),
            "### All configurations", "", *table(data)]
    if peer and data.get("litellm_failure"):
        body += ["", "LiteLLM did not run; the last lines of its output:", "", "```", data["litellm_failure"], "```"]
    if not peer:
        body += ["", "![latency and throughput](bench-latency.svg)"]
    doc = DOC.read_text() if DOC.exists() else SKELETON
    doc = replace_section(doc, "peer" if peer else "gateway-overhead", "\n".join(body))
    DOC.write_text(doc)
    chart_inputs = [p for p in (latest(False), latest(True)) if p is not None]
    if path not in chart_inputs:
        chart_inputs.append(path)
    SVG.write_text(svg([load(p) for p in chart_inputs]))


if __name__ == "__main__":
    write_docs(Path(sys.argv[1]))
