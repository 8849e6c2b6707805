"""The values that cross into and out of `routing.decide`."""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from .snapshot import ModelSnap, PolicySnap, RouteSnap

AUTO_MODEL_NAMES = frozenset({"auto", "inferbase/auto"})

# The task families and complexity bands the router classifies requests into.
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


@dataclass(frozen=True, slots=True)
class RoutingOverrides:
    """The request's `routing` object: may narrow the policy, never widen it."""

    optimize: str | None = None
    model_pool: tuple[str, ...] | None = None
    quality_floor: str | None = None
    max_cost_micros: int | None = None
    first_token_timeout_ms: int | None = None
    deadline_ms: int | None = None
    allowed_providers: tuple[str, ...] | None = None
    chain_length: int | None = None
    prefer_cache: bool | None = None


@dataclass(frozen=True, slots=True)
class Classification:
    task: str | None
    complexity: str | None
    estimated: bool = False
    cached: bool = False


@dataclass(frozen=True, slots=True)
class RoutingRequest:
    """What routing needs to know about one chat-completions request."""

    model: str  # "auto" / "inferbase/auto" or a catalog id (slug or slug:variant)
    prompt_tokens: int
    max_tokens: int | None
    stream: bool
    needs_tools: bool = False
    needs_structured_output: bool = False
    needs_vision: bool = False
    extended_thinking: bool | None = None
    tool_loop: bool = False  # last message is a tool result, or the last assistant turn has tool_calls
    has_history: bool = False  # the conversation already has assistant turns
    session_model: str | None = None  # the model that began this conversation, if known
    project_id: int | None = None
    cost_multiplier: float = 1.0  # what the organization pays per list-price micro-dollar (markup; 0 free)
    # Routes resting after repeated failures (circuit open): route id -> wall-clock time it rests until.
    resting_routes: Mapping[str, float] = field(default_factory=dict)
    overrides: RoutingOverrides = field(default_factory=RoutingOverrides)
    # The wall-clock time of the request, and a draw in [0, 1) that decides the shares of traffic routing
    # sends to probes and to exploration: given to `decide` with the request, so it stays a pure function
    # (tests set both to reach the branch they test).
    now: float = field(default_factory=time.time)
    ticket: float = field(default_factory=random.random)

    @property
    def is_auto(self) -> bool:
        return self.model in AUTO_MODEL_NAMES


@dataclass(frozen=True, slots=True)
class ChainLink:
    """One attempt the gateway may make, in order."""

    route: RouteSnap
    model: ModelSnap
    api_key: str | None
    own_key: bool
    thinking: bool | None = None  # what to send this link's upstream: on, off, or leave to the model


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome of routing: the chain to walk, the public routing object and the audit record."""

    chain: tuple[ChainLink, ...]
    policy: PolicySnap
    routing: dict[str, Any]  # the routing object as the client sees it (minus object, routing_time_ms)
    filter_trail: tuple[dict[str, Any], ...]
    filter_trail_text: tuple[str, ...]
    eligibility_pool_size: int
    thinking: bool | None  # what to send upstream for the pick: True on, False off, None leave to model
    first_token_timeout_ms: int
    total_deadline_ms: int


class RoutingError(Exception):
    """The request cannot be routed; carries an HTTP status and an error code for the envelope."""

    def __init__(self, message: str, *, status: int, code: str, param: str | None = None,
                 filter_trail: tuple[dict[str, Any], ...] = (), filter_trail_text: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.param = param
        self.filter_trail = filter_trail
        self.filter_trail_text = filter_trail_text
