"""The dialect-neutral answer a simulated model gives to one request."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from . import text
from .directives import Directives
from .profiles import SimProfile

DEFAULT_ANSWER_TOKENS = 40
CHUNK_TOKENS = 4  # tokens per streamed chunk


class WireError(Exception):
    """The request is invalid for this dialect; answered with `status` and the dialect's error body."""

    def __init__(
        self, status: int, message: str, *, kind: str | None = None, code: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind
        self.code = code


@dataclass(frozen=True, slots=True)
class SimRequest:
    """What the simulator needs from a request, read from either wire format."""

    model: str
    seed: int
    last_user_text: str
    last_is_user: bool  # the conversation ends with the user speaking (not a tool result)
    tools: tuple[tuple[str, Mapping[str, Any]], ...]  # (name, JSON schema of the arguments)
    forced_tool: str | None  # tool_choice forces a call: "" for any tool, else the tool's name
    thinking: bool  # the request's switch, for switchable models
    thinking_budget: int | None
    max_tokens: int | None
    json_mode: bool
    json_schema: Mapping[str, Any] | None
    prompt_tokens: int
    n: int = 1  # choices asked for (OpenAI wire); each is the same answer


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    arguments: str  # JSON text
    call_id: str  # without the dialect's prefix


@dataclass(frozen=True, slots=True)
class Plan:
    """Token lists to emit and how the answer ends; `finish` uses OpenAI's finish_reason words."""

    reasoning: tuple[str, ...]
    content: tuple[str, ...]
    tool_call: ToolCall | None
    tool_tokens: tuple[str, ...]
    finish: str  # "stop" | "length" | "tool_calls" | "content_filter"
    prompt_tokens: int
    seed: int

    @property
    def completion_tokens(self) -> int:
        return len(self.reasoning) + len(self.content) + len(self.tool_tokens)

    @property
    def content_text(self) -> str:
        return "".join(self.content)

    @property
    def reasoning_text(self) -> str:
        return "".join(self.reasoning)

    def pieces(self, per_chunk: int = CHUNK_TOKENS) -> list[tuple[str, str, int]]:
        """Return the stream as (kind, text, tokens) pieces; kind is reasoning, content or tool."""
        out: list[tuple[str, str, int]] = []
        for kind, toks in (
            ("reasoning", self.reasoning),
            ("content", self.content),
            ("tool", self.tool_tokens),
        ):
            for i in range(0, len(toks), per_chunk):
                part = toks[i : i + per_chunk]
                out.append((kind, "".join(part), len(part)))
        return out


def _is_refused(req: SimRequest, profile: SimProfile, directives: Directives) -> bool:
    if directives.refuse:
        return True
    if not profile.refuses_on:
        return False
    lowered = req.last_user_text.lower()
    return any(k in lowered for k in profile.refuses_on)


def _pick_tool(req: SimRequest, wanted: str) -> tuple[str, Mapping[str, Any]]:
    for name, schema in req.tools:
        if name == wanted:
            return name, schema
    return req.tools[0]


def _answer_tokens(req: SimRequest, profile: SimProfile, directives: Directives) -> list[str]:
    if req.json_mode and not directives.json_none:
        doc = orjson.dumps(text.json_document(req.json_schema, req.model, req.seed)).decode()
        if profile.json_in_fences:
            doc = f"{text.label(req.model)}Here is the JSON:\n```json\n{doc}\n```"
        return text.tokenize(doc)
    return text.filler_tokens(req.model, req.seed, directives.tokens or DEFAULT_ANSWER_TOKENS)


def build_plan(req: SimRequest, profile: SimProfile, directives: Directives) -> Plan:
    """Return what `profile` answers to `req`: reasoning first (counting toward max_tokens), then text,
    a refusal or a tool call, cut with finish "length" where max_tokens runs out."""
    limit = req.max_tokens
    if _is_refused(req, profile, directives):
        return Plan(
            (), tuple(text.refusal_tokens(req.model)), None, (), "content_filter", req.prompt_tokens, req.seed
        )

    thinks = profile.reasoning == "always_on" or (profile.reasoning == "switchable" and req.thinking)
    n_reasoning = profile.reasoning_tokens if thinks else 0
    if thinks and req.thinking_budget is not None:
        n_reasoning = min(n_reasoning, req.thinking_budget)
    reasoning = text.reasoning_tokens(req.seed, n_reasoning)
    if limit is not None and len(reasoning) >= limit:
        return Plan(tuple(reasoning[:limit]), (), None, (), "length", req.prompt_tokens, req.seed)
    room = None if limit is None else limit - len(reasoning)

    wanted = directives.tool_call if directives.tool_call is not None and req.last_is_user else req.forced_tool
    if wanted is not None and req.tools:
        name, schema = _pick_tool(req, wanted)
        args = orjson.dumps(text.json_document(schema or {"type": "object"}, req.model, req.seed)).decode()
        tool_tokens = text.tokenize(args)
        if room is not None and len(tool_tokens) > room:
            # A half-written call is useless to the caller; a real model would stop the same way.
            return Plan(tuple(reasoning), (), None, (), "length", req.prompt_tokens, req.seed)
        call = ToolCall(name=name, arguments=args, call_id=f"{req.seed:016x}")
        return Plan(tuple(reasoning), (), call, tuple(tool_tokens), "tool_calls", req.prompt_tokens, req.seed)

    answer = _answer_tokens(req, profile, directives)
    finish = "stop"
    if room is not None and len(answer) > room:
        answer, finish = answer[:room], "length"
    return Plan(tuple(reasoning), tuple(answer), None, (), finish, req.prompt_tokens, req.seed)
