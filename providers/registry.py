"""Adapters by dialect: a registry, not an if-chain. Settings may override with dotted paths."""

from __future__ import annotations

from functools import cache

from django.conf import settings
from django.utils.module_loading import import_string

from .base import ProviderAdapter, ThinkingTraits

DEFAULT_ADAPTERS = {
    "openai": "providers.openai_compat.OpenAICompatibleAdapter",
    "anthropic": "providers.anthropic.AnthropicAdapter",
}


@cache
def adapter_for(dialect: str) -> ProviderAdapter:
    """Return the adapter instance for a dialect; KeyError when none is registered."""
    paths = {**DEFAULT_ADAPTERS, **getattr(settings, "INFERBASE_ADAPTERS", {})}
    return import_string(paths[dialect])()


def thinking_traits(dialect: str) -> ThinkingTraits:
    """Return how the dialect's adapter serves a switchable model's thinking; KeyError for an unknown dialect."""
    return adapter_for(dialect).thinking
