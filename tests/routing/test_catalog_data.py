"""Consistency checks for the shipped routing data (routing/data/catalog.json and evidence.json).

Pure data tests: no Django, no database. Run with
    python -m pytest -p no:django -p no:cacheprovider tests/routing/test_catalog_data.py -q
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from providers.base import THINKING_SWITCHES
from routing.decision import TASKS

DATA_DIR = Path(__file__).resolve().parents[2] / "routing" / "data"

SCORE_KEYS = ("overall",) + TASKS
REASONING_MODES = {"none", "switchable", "always_on"}
PROMPT_CACHING = {"automatic", "explicit", "none"}
SIMULATED_KINDS = {"simulated"}
VERSION_RE = re.compile(r"^\d{4}\.\d{2}\.\d{2}-\d+$")

PROVIDER_KEYS = {
    "slug",
    "name",
    "kind",
    "dialect",
    "base_url",
    "api_key_env",
    "prompt_caching",
    "data_regions",
}
MODEL_KEYS = {
    "id",
    "base_id",
    "variant_label",
    "name",
    "author",
    "released",
    "capabilities",
    "reasoning",
    "typical_reasoning_tokens",
    "slow_tier",
    "simulation",
    "routes",
}
ROUTE_KEYS = {
    "provider",
    "upstream_model",
    "price_input",
    "price_output",
    "price_cached_input",
    "context_window",
    "max_output_tokens",
}
OPTIONAL_ROUTE_KEYS = {"thinking_switch"}
LATENCY_KEYS = {"ttft_ms_p50", "ttft_ms_p90", "tokens_per_second"}  # a prior: no samples


def _load(name: str) -> dict:
    with (DATA_DIR / name).open(encoding="utf-8") as fh:
        return json.load(fh)


@pytest.fixture(scope="module")
def catalog() -> dict:
    return _load("catalog.json")


@pytest.fixture(scope="module")
def evidence() -> dict:
    return _load("evidence.json")


@pytest.fixture(scope="module")
def providers(catalog) -> dict[str, dict]:
    return {p["slug"]: p for p in catalog["providers"]}


@pytest.fixture(scope="module")
def models(catalog) -> dict[str, dict]:
    return {m["id"]: m for m in catalog["models"]}


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --- catalog -------------------------------------------------------------------------------------


def test_files_load_and_versions_match(catalog, evidence):
    assert VERSION_RE.match(catalog["version"]), catalog["version"]
    assert VERSION_RE.match(evidence["version"]), evidence["version"]
    assert catalog["version"] == evidence["version"], "bump both files together"
    assert set(catalog) == {"version", "providers", "models"}
    assert set(evidence) == {"format", "version", "as_of", "sources", "benchmarks", "route_latency"}


def test_providers_schema(catalog, providers):
    slugs = [p["slug"] for p in catalog["providers"]]
    assert len(slugs) == len(set(slugs)), "duplicate provider slugs"
    for p in catalog["providers"]:
        assert set(p) == PROVIDER_KEYS, p["slug"]
        assert p["dialect"] in {"openai", "anthropic"}, p["slug"]
        assert p["prompt_caching"] in PROMPT_CACHING, p["slug"]
        assert isinstance(p["data_regions"], list) and p["data_regions"], p["slug"]
        if p["kind"] in SIMULATED_KINDS:
            assert p["base_url"] is None and p["api_key_env"] is None, p["slug"]
        else:
            assert p["base_url"].startswith("https://"), p["slug"]
            assert not p["base_url"].endswith("/"), p["slug"]
            assert re.fullmatch(r"[A-Z][A-Z0-9_]*_API_KEY", p["api_key_env"]), p["slug"]
    assert providers["simulated"]["dialect"] == "openai"
    assert providers["simulated-anthropic"]["dialect"] == "anthropic"


def test_enough_models_and_real_providers(catalog, providers):
    assert len(catalog["models"]) >= 16
    real = {s for s, p in providers.items() if p["kind"] not in SIMULATED_KINDS}
    assert len(real) >= 5
    used = {r["provider"] for m in catalog["models"] for r in m["routes"]}
    assert len(used & real) >= 5


def test_model_ids_unique_and_well_formed(catalog):
    ids = [m["id"] for m in catalog["models"]]
    assert len(ids) == len(set(ids)), "duplicate model ids"
    for mid in ids:
        assert re.fullmatch(r"[a-z0-9][a-z0-9.\-]*(:[a-z0-9][a-z0-9\-]*)?", mid), mid


def test_model_schema(catalog):
    for m in catalog["models"]:
        assert set(m) == MODEL_KEYS, m["id"]
        assert set(m["capabilities"]) == {"tools", "structured_output", "vision"}, m["id"]
        assert all(isinstance(v, bool) for v in m["capabilities"].values()), m["id"]
        assert isinstance(m["slow_tier"], bool), m["id"]
        assert re.fullmatch(r"\d{4}-\d{2}", m["released"]), m["id"]
        assert m["name"] and m["author"], m["id"]


def test_variants_reference_existing_base(catalog, models):
    variants = [m for m in catalog["models"] if m["id"] != m["base_id"]]
    assert len(variants) >= 2
    for m in catalog["models"]:
        if m["id"] == m["base_id"]:
            assert m["variant_label"] is None, m["id"]
            assert ":" not in m["id"], m["id"]
            continue
        assert m["base_id"] in models, f"{m['id']}: unknown base_id {m['base_id']}"
        base = models[m["base_id"]]
        assert base["base_id"] == base["id"], f"{m['id']}: base must not itself be a variant"
        assert m["id"] == f"{m['base_id']}:{m['variant_label']}", m["id"]


def test_reasoning_fields(catalog):
    for m in catalog["models"]:
        assert m["reasoning"] in REASONING_MODES, m["id"]
        trt = m["typical_reasoning_tokens"]
        assert _is_int(trt) and trt >= 0, m["id"]
        if m["reasoning"] == "none":
            assert trt == 0, m["id"]
        else:
            assert trt > 0, m["id"]
    modes = {m["reasoning"] for m in catalog["models"]}
    assert modes == REASONING_MODES, "catalog should exercise every reasoning mode"


def test_simulation_blocks(catalog):
    fenced = 0
    refusing = 0
    for m in catalog["models"]:
        sim = m.get("simulation")
        assert isinstance(sim, dict), m["id"]
        assert set(sim) <= {
            "ttft_ms",
            "tokens_per_second",
            "reasoning_tokens",
            "json_in_fences",
            "refuses_on",
        }
        assert _is_int(sim["ttft_ms"]) and 100 <= sim["ttft_ms"] <= 1500, m["id"]
        assert _is_int(sim["tokens_per_second"]) and 30 <= sim["tokens_per_second"] <= 1000, m["id"]
        assert _is_int(sim["reasoning_tokens"]) and sim["reasoning_tokens"] >= 0, m["id"]
        if m["reasoning"] == "none":
            assert sim["reasoning_tokens"] == 0, m["id"]
        else:
            assert sim["reasoning_tokens"] > 0, m["id"]
        assert isinstance(sim["json_in_fences"], bool), m["id"]
        fenced += sim["json_in_fences"]
        if "refuses_on" in sim:
            refusing += 1
            assert sim["refuses_on"] and all(isinstance(k, str) and k for k in sim["refuses_on"]), m["id"]
    assert 2 <= fenced <= 4
    assert refusing <= 1


def test_routes(catalog, providers):
    for m in catalog["models"]:
        assert m["routes"], f"{m['id']} has no routes"
        seen = set()
        for r in m["routes"]:
            where = f"{r.get('provider')}/{m['id']}"
            assert ROUTE_KEYS <= set(r) <= ROUTE_KEYS | OPTIONAL_ROUTE_KEYS, where
            assert r["provider"] in providers, f"{where}: unknown provider"
            assert providers[r["provider"]]["kind"] not in SIMULATED_KINDS, (
                f"{where}: simulated routes are derived"
            )
            assert r["provider"] not in seen, f"{where}: duplicate route"
            seen.add(r["provider"])
            assert isinstance(r["upstream_model"], str) and r["upstream_model"].strip(), where
            for key in ("price_input", "price_output"):
                assert _is_number(r[key]) and r[key] >= 0, f"{where}: {key}"
            cached = r["price_cached_input"]
            assert cached is None or (_is_number(cached) and 0 <= cached <= r["price_input"]), where
            assert _is_int(r["context_window"]) and _is_int(r["max_output_tokens"]), where
            assert r["context_window"] >= r["max_output_tokens"] > 0, where


def test_switchable_models_declare_each_openai_routes_thinking_switch(catalog, providers):
    """A non-standard thinking switch is sent only where declared; an OpenAI-dialect route of a model whose
    thinking can be switched says how (or `none`), and only such a route says anything."""
    for m in catalog["models"]:
        for r in m["routes"]:
            where = f"{r['provider']}/{m['id']}"
            needs = m["reasoning"] == "switchable" and providers[r["provider"]]["dialect"] == "openai"
            assert ("thinking_switch" in r) == needs, where
            assert r.get("thinking_switch", "none") in THINKING_SWITCHES, where


def test_claude_models_use_anthropic_dialect(catalog, providers):
    for m in catalog["models"]:
        if m["author"] != "anthropic":
            continue
        assert any(providers[r["provider"]]["dialect"] == "anthropic" for r in m["routes"]), m["id"]


def test_some_models_served_by_several_providers(catalog):
    multi = [m["id"] for m in catalog["models"] if len({r["provider"] for r in m["routes"]}) > 1]
    assert len(multi) >= 3, multi


# --- evidence ------------------------------------------------------------------------------------


def test_sources_schema(evidence):
    assert evidence["sources"]
    for key, src in evidence["sources"].items():
        assert {"title", "url", "as_of"} <= set(src), key
        assert src["url"].startswith("https://"), key
        assert re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", src["as_of"]), key


def test_every_score_names_its_source(evidence, models):
    for mid, scores in evidence["benchmarks"].items():
        assert mid in models, f"benchmarks for unknown model {mid}"
        assert set(scores) <= set(SCORE_KEYS), f"{mid}: unknown keys"
        for key, cell in scores.items():
            assert set(cell) == {"score", "source"}, f"{mid}.{key}"
            assert cell["source"] in evidence["sources"], f"{mid}.{key}"


def test_scores_in_unit_interval(evidence):
    for mid, scores in evidence["benchmarks"].items():
        for key, cell in scores.items():
            assert _is_number(cell["score"]) and 0.0 <= cell["score"] <= 1.0, f"{mid}.{key}"


def test_some_cells_deliberately_missing(evidence, models):
    bench = evidence["benchmarks"]
    partial = [mid for mid, s in bench.items() if any(t not in s for t in TASKS)]
    assert len(partial) >= 3, partial
    sparse = [mid for mid in models if mid not in bench or not any(t in bench[mid] for t in TASKS)]
    assert sparse, "at least one model must have only 'overall' or no benchmarks at all"


def test_route_latency_references_real_routes(evidence, catalog):
    real_routes = {f"{r['provider']}/{m['id']}" for m in catalog["models"] for r in m["routes"]}
    latency = evidence["route_latency"]
    for key, lat in latency.items():
        assert key in real_routes, f"latency for unknown route {key}"
        assert set(lat) == LATENCY_KEYS, key
        assert _is_number(lat["ttft_ms_p50"]) and lat["ttft_ms_p50"] > 0, key
        assert lat["ttft_ms_p90"] >= lat["ttft_ms_p50"], key
        assert _is_number(lat["tokens_per_second"]) and lat["tokens_per_second"] > 0, key
    unmeasured = real_routes - set(latency)
    assert 1 <= len(unmeasured) <= len(real_routes) // 2, sorted(unmeasured)
