"""Task families and complexity bands the router classifies requests into."""

from __future__ import annotations

from typing import Literal

Task = Literal[
    "coding",
    "maths",
    "reasoning",
    "factual",
    "writing",
    "summarization",
    "extraction",
    "translation",
    "chat",
    "tool_use",
]
Complexity = Literal["easy", "standard", "hard"]

TASKS: tuple[Task, ...] = (
    "coding",
    "maths",
    "reasoning",
    "factual",
    "writing",
    "summarization",
    "extraction",
    "translation",
    "chat",
    "tool_use",
)
COMPLEXITIES: tuple[Complexity, ...] = ("easy", "standard", "hard")
