"""Benchmark routing.decide on a synthetic 40-model catalog, and prompt token counting by length.

Run: python -m routing.engine_bench
"""

from __future__ import annotations

import statistics
import time

from .decision import TASKS, Classification, RoutingOverrides, RoutingRequest
from .engine import decide
from .snapshot import INFERBASE_DEFAULT_POLICY, ModelSnap, RouteLatencySnap, RouteSnap, Snapshot
from .tokens import count_prompt_tokens, encoding

PROVIDERS = ("groq", "together", "fireworks", "simulated")


def bench_snapshot(model_count: int = 40) -> Snapshot:
    """Return a synthetic catalog: model_count models, three routes each, benchmarks on every task."""
    models: dict[str, ModelSnap] = {}
    routes: dict[str, tuple[RouteSnap, ...]] = {}
    for index in range(model_count):
        model_id = f"bench-model-{index:02d}"
        models[model_id] = ModelSnap(
            id=model_id, base_id=model_id, variant_label=None, name=model_id, supports_tools=index % 3 != 0,
            verified_structured_output=index % 2 == 0, supports_vision=False,
            reasoning=("none", "switchable", "always_on")[index % 3], typical_reasoning_tokens=800 * (index % 3),
            slow_tier=False,
            benchmarks={task: 0.4 + ((index * 7 + t) % 50) / 100 for t, task in enumerate(TASKS)} | {"overall": 0.6},
        )
        routes[model_id] = tuple(
            RouteSnap(
                route_id=f"{provider}/{model_id}", model_id=model_id, provider=provider,
                provider_kind="simulated" if provider == "simulated" else "openai-compatible", dialect="openai",
                base_url="http://127.0.0.1:1/v1", upstream_model=model_id, api_key_env="",
                price_input=0.1 + index / 100 + slot / 10, price_output=0.4 + index / 50, price_cached_input=None,
                input_micros_per_mtok=100_000 + 10_000 * index + 100_000 * slot,
                output_micros_per_mtok=400_000 + 20_000 * index, cached_input_micros_per_mtok=None,
                context_window=32_000 * (1 + index % 4), max_output_tokens=8_192, prompt_caching="automatic",
                data_regions=("us",), latency=RouteLatencySnap(200 + 10 * index + 50 * slot, 80.0 + index, 10),
                env_credential=True,
            )
            for slot, provider in enumerate(PROVIDERS[(index % 2):(index % 2) + 3])
        )
    return Snapshot(version="bench", models=models, routes=routes, policies={}, project_policy={},
                    organization_policy={}, provider_keys={}, simulated_enabled=True)


def run(iterations: int = 5_000) -> dict[str, float]:
    """Time decide() on the bench catalog: wall p50 and p99, and mean CPU time (robust to a busy machine), in us."""
    snapshot = bench_snapshot()
    classification = Classification(task="coding", complexity="standard")
    request = RoutingRequest(model="auto", prompt_tokens=1_200, max_tokens=1_000, stream=True,
                             overrides=RoutingOverrides(optimize="balanced", max_cost_micros=50_000))
    for _ in range(200):
        decide(request, classification, INFERBASE_DEFAULT_POLICY, snapshot)
    samples = []
    cpu_started = time.process_time_ns()
    for _ in range(iterations):
        started = time.perf_counter_ns()
        decide(request, classification, INFERBASE_DEFAULT_POLICY, snapshot)
        samples.append((time.perf_counter_ns() - started) / 1_000)
    cpu_us = (time.process_time_ns() - cpu_started) / 1_000 / iterations
    samples.sort()
    return {"p50_us": statistics.median(samples), "p99_us": samples[int(len(samples) * 0.99) - 1], "cpu_us": cpu_us}


def token_timings(lengths: tuple[int, ...] = (1_000, 32_000, 100_000, 1_000_000)) -> dict[int, float]:
    """Time count_prompt_tokens on one message of each length (characters); return milliseconds."""
    encoding()
    words = "routing picks the model for each request and explains why " * (max(lengths) // 59 + 1)
    timings = {}
    for length in lengths:
        messages = [{"role": "user", "content": words[:length]}]
        started = time.perf_counter()
        for _ in range(5):
            count_prompt_tokens(messages)
        timings[length] = (time.perf_counter() - started) / 5 * 1_000
    return timings


if __name__ == "__main__":
    figures = run()
    print(f"decide() on 40 models x 3 routes: p50 {figures['p50_us']:.0f} us, p99 {figures['p99_us']:.0f} us, "
          f"mean CPU {figures['cpu_us']:.0f} us")
    for length, ms in token_timings().items():
        print(f"count_prompt_tokens on {length:>9,} characters: {ms:.2f} ms")
