"""The simulated upstream: real wire formats (OpenAI, Anthropic) with per-model behaviour from the catalog."""

from __future__ import annotations

from .app import SimulatedUpstream, build_app
from .directives import Directives, parse_directives
from .profiles import DEFAULT_PROFILE, SimProfile, load_profiles, profile_for

__all__ = [
    "DEFAULT_PROFILE",
    "Directives",
    "SimProfile",
    "SimulatedUpstream",
    "build_app",
    "load_profiles",
    "parse_directives",
    "profile_for",
]
