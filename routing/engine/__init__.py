"""The decision engine: pick the model and fallback chain for one request, pure and in memory."""

from __future__ import annotations

from .core import decide

__all__ = ["decide"]
