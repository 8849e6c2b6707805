"""Factories for the provider tests."""

from __future__ import annotations

from typing import Any

from providers.simulated import SimProfile


def make_profile(**overrides: Any) -> SimProfile:
    """Build a simulated model's profile: a plain, fast model unless overridden."""
    values: dict[str, Any] = {
        "ttft_ms": 100,
        "tokens_per_second": 500.0,
        "reasoning": "none",
        "reasoning_tokens": 0,
        "json_in_fences": False,
        "refuses_on": (),
        "vision": True,
    }
    values.update(overrides)
    return SimProfile(**values)
