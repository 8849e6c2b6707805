"""What the Anthropic adapter's tests share: call options, the simulated Claude models, a tool, a user turn."""

from __future__ import annotations

import time
from typing import Any

from providers.base import CallOptions
from providers.simulated import SimProfile
from tests.providers.conftest import make_profile


def make_options(**overrides: Any) -> CallOptions:
    values: dict[str, Any] = {
        "first_token_timeout": 5.0,
        "idle_timeout": 5.0,
        "deadline": time.monotonic() + 30,
    }
    values.update(overrides)
    return CallOptions(**values)


def sim_profile(**overrides: Any) -> SimProfile:
    return make_profile(**{"ttft_ms": 50, "tokens_per_second": 1000.0, **overrides})


PROFILES = {
    "claude-plain": sim_profile(),
    "claude-switch": sim_profile(reasoning="switchable", reasoning_tokens=40),
    "claude-always": sim_profile(reasoning="always_on", reasoning_tokens=40),
    "claude-deep": sim_profile(reasoning="switchable", reasoning_tokens=3000),  # thinks to its whole budget
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


def user(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]
