"""Per-model behaviour of the simulated upstream, read from the catalog."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

REASONING_MODES = ("none", "switchable", "always_on")


@dataclass(frozen=True, slots=True)
class SimProfile:
    """How one simulated model behaves: timing, reasoning, structured output quirks, refusals."""

    ttft_ms: int
    tokens_per_second: float
    reasoning: str  # "none" | "switchable" | "always_on"
    reasoning_tokens: int
    json_in_fences: bool
    refuses_on: tuple[str, ...]
    vision: bool


# An unknown model answers quickly and plainly, so a new route works before the catalog knows it.
DEFAULT_PROFILE = SimProfile(
    ttft_ms=50,
    tokens_per_second=400.0,
    reasoning="none",
    reasoning_tokens=0,
    json_in_fences=False,
    refuses_on=(),
    vision=True,
)


def _reasoning_mode(value: Any) -> str:
    # The catalog may say a mode, or just whether the model reasons at all.
    if value is True:
        return "switchable"
    if isinstance(value, str) and value in REASONING_MODES:
        return value
    return "none"


def profile_from_catalog_entry(entry: Mapping[str, Any]) -> SimProfile:
    """Return the profile for one catalog `models[]` entry; missing fields take the default's values."""
    sim = entry.get("simulation") or {}
    caps = entry.get("capabilities") or {}
    reasoning = _reasoning_mode(entry.get("reasoning"))
    reasoning_tokens = sim.get("reasoning_tokens", entry.get("typical_reasoning_tokens", 0)) or 0
    return SimProfile(
        ttft_ms=int(sim.get("ttft_ms", DEFAULT_PROFILE.ttft_ms)),
        tokens_per_second=float(sim.get("tokens_per_second", DEFAULT_PROFILE.tokens_per_second)) or 1.0,
        reasoning=reasoning,
        reasoning_tokens=int(reasoning_tokens) if reasoning != "none" else 0,
        json_in_fences=bool(sim.get("json_in_fences", False)),
        refuses_on=tuple(str(k).lower() for k in sim.get("refuses_on") or ()),
        vision=bool(caps.get("vision", True)),
    )


def load_profiles(catalog_path: Path) -> dict[str, SimProfile]:
    """Return profiles keyed by catalog model id; raise OSError / ValueError on an unreadable catalog."""
    data = orjson.loads(Path(catalog_path).read_bytes())
    return {str(m["id"]): profile_from_catalog_entry(m) for m in data.get("models", []) if "id" in m}


def profile_for(profiles: Mapping[str, SimProfile], model: str) -> SimProfile:
    """Return the profile serving `model` ("id" or "id:variant"), falling back to the default."""
    profile = profiles.get(model)
    if profile is None and ":" in model:
        profile = profiles.get(model.split(":", 1)[0])
    return profile or DEFAULT_PROFILE
