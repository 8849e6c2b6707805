"""Task families and complexity bands the router classifies requests into."""

from __future__ import annotations

from typing import Literal, get_args

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

TASKS: tuple[Task, ...] = get_args(Task)
COMPLEXITIES: tuple[Complexity, ...] = get_args(Complexity)
