"""Adapters by dialect: a registry, not an if-chain."""

from __future__ import annotations

from types import MappingProxyType

from .anthropic import AnthropicAdapter
from .base import ProviderAdapter, ThinkingTraits
from .openai_compat import OpenAICompatibleAdapter

# One adapter instance per dialect for the process: adapters hold no per-request state.
ADAPTERS: MappingProxyType[str, ProviderAdapter] = MappingProxyType({
    "openai": OpenAICompatibleAdapter(),
    "anthropic": AnthropicAdapter(),
})


def adapter_for(dialect: str) -> ProviderAdapter:
    """Return the adapter instance for a dialect; KeyError when none is registered."""
    return ADAPTERS[dialect]


def thinking_traits(dialect: str) -> ThinkingTraits:
    """Return how the dialect's adapter serves a switchable model's thinking; KeyError for an unknown dialect."""
    return adapter_for(dialect).thinking
