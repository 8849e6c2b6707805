"""The Anthropic Messages wire format of the simulated upstream."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

import orjson

from ..content import content_text
from . import text
from .plan import Plan, SimRequest, WireError

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    503: "overloaded_error",
    529: "overloaded_error",
}
STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
}
_SCHEMA_MARK = "JSON schema:"


def _system_text(system: Any) -> str:
    return system if isinstance(system, str) else content_text(system)


def _has_tool_result(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _schema_in(system: str) -> Mapping[str, Any] | None:
    # A gateway asking for a schema over this wire writes it after "JSON schema:" in the system prompt.
    at = system.rfind(_SCHEMA_MARK)
    if at < 0:
        return None
    try:
        schema = orjson.loads(system[at + len(_SCHEMA_MARK) :].strip())
    except orjson.JSONDecodeError:
        return None
    return schema if isinstance(schema, dict) else None


def _signature(seed: int) -> str:
    return base64.b64encode(b"simulated-signature-" + seed.to_bytes(8, "big")).decode()


def _check_sampling(body: Mapping[str, Any]) -> None:
    """Refuse what the current Claude models refuse: a temperature above 1, or temperature and top_p together."""
    temperature = body.get("temperature")
    if temperature is not None and not 0 <= temperature <= 1:
        raise WireError(400, "temperature: Input should be less than or equal to 1")
    if temperature is not None and body.get("top_p") is not None:
        raise WireError(400, "`temperature` and `top_p` cannot both be specified for this model. Please use only one.")


class AnthropicWire:
    """Parse Anthropic Messages requests and render plans as `message` bodies or SSE events."""

    name = "anthropic"

    def error_body(
        self, status: int, message: str, *, kind: str | None = None, code: str | None = None
    ) -> bytes:
        """Return Anthropic's `{"type": "error", "error": {...}}` body for status."""
        kind = kind or _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return orjson.dumps({"type": "error", "error": {"type": kind, "message": message}})

    def model_not_found(self, model: str) -> WireError:
        return WireError(404, f"model: {model}", kind="not_found_error")

    def parse(self, body: Mapping[str, Any], seed_of: Any = text.request_seed) -> SimRequest:
        """Return the SimRequest for an Anthropic body; raise WireError when Anthropic would refuse it."""
        model = body.get("model")
        messages = body.get("messages")
        max_tokens = body.get("max_tokens")
        if not isinstance(model, str) or not model:
            raise WireError(400, "model: Field required")
        if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
            raise WireError(400, "messages: Field required")
        if max_tokens is None:
            raise WireError(400, "max_tokens: Field required")
        if not isinstance(max_tokens, int) or max_tokens < 1:
            raise WireError(400, "max_tokens: Input should be a positive integer")
        thinking = body.get("thinking") or {}
        enabled = isinstance(thinking, dict) and thinking.get("type") == "enabled"
        budget = thinking.get("budget_tokens") if enabled else None
        if enabled:
            if not isinstance(budget, int) or budget < 1024:
                raise WireError(
                    400, "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
                )
            if budget >= max_tokens:
                raise WireError(400, "`max_tokens` must be greater than `thinking.budget_tokens`")
            if body.get("temperature") not in (None, 1, 1.0):
                raise WireError(400, "`temperature` may only be set to 1 when thinking is enabled")
            if body.get("top_p") is not None and body["top_p"] < 0.95:
                raise WireError(400, "`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled")
            if (body.get("tool_choice") or {}).get("type") in ("any", "tool"):
                raise WireError(400, "Thinking may not be enabled when tool_choice forces tool use.")
        _check_sampling(body)
        system = _system_text(body.get("system"))
        tools = tuple(
            (t["name"], t.get("input_schema") or {})
            for t in body.get("tools") or ()
            if isinstance(t, dict) and "name" in t
        )
        choice = body.get("tool_choice")
        if isinstance(choice, dict) and choice.get("type") == "none":
            tools = ()
        forced_tool = None
        if isinstance(choice, dict) and choice.get("type") == "any":
            forced_tool = ""
        elif isinstance(choice, dict) and choice.get("type") == "tool":
            forced_tool = str(choice.get("name") or "")
        last_user_text = ""
        for m in reversed(messages):
            if m.get("role") == "user":
                last_user_text = content_text(m.get("content"))
                if last_user_text:
                    break
        last = messages[-1]
        prompt_tokens = text.count_tokens(system) + sum(
            4 + text.count_tokens(content_text(m.get("content"))) for m in messages
        )
        if tools:
            prompt_tokens += text.count_tokens(orjson.dumps(body.get("tools")).decode())
        json_mode = "JSON" in system
        return SimRequest(
            model=model,
            seed=seed_of(model, messages),
            last_user_text=last_user_text,
            last_is_user=last.get("role") == "user" and not _has_tool_result(last),
            tools=tools,
            forced_tool=forced_tool if tools else None,
            thinking=enabled,
            thinking_budget=budget,
            max_tokens=max_tokens,
            json_mode=json_mode,
            json_schema=(_schema_in(system) or text.shape_in(system + "\n" + last_user_text)) if json_mode else None,
            prompt_tokens=prompt_tokens,
        )

    def has_images(self, body: Mapping[str, Any]) -> bool:
        return any(
            isinstance(m.get("content"), list)
            and any(isinstance(b, dict) and b.get("type") == "image" for b in m["content"])
            for m in body.get("messages") or ()
            if isinstance(m, dict)
        )

    def usage(self, plan: Plan, *, output_tokens: int | None = None) -> dict[str, int]:
        return {
            "input_tokens": plan.prompt_tokens,
            "output_tokens": plan.completion_tokens if output_tokens is None else output_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }

    def complete(self, plan: Plan, req: SimRequest, response_id: str) -> bytes:
        """Return the `message` body for plan."""
        content: list[dict[str, Any]] = []
        if plan.reasoning:
            content.append(
                {"type": "thinking", "thinking": plan.reasoning_text, "signature": _signature(plan.seed)}
            )
        if plan.content:
            content.append({"type": "text", "text": plan.content_text})
        if plan.tool_call:
            content.append(
                {
                    "type": "tool_use",
                    "id": "toolu_" + plan.tool_call.call_id,
                    "name": plan.tool_call.name,
                    "input": orjson.loads(plan.tool_call.arguments),
                }
            )
        return orjson.dumps(
            {
                "id": "msg_" + response_id,
                "type": "message",
                "role": "assistant",
                "model": req.model,
                "content": content,
                "stop_reason": STOP_REASONS[plan.finish],
                "stop_sequence": None,
                "usage": self.usage(plan),
            }
        )

    def stream(
        self, plan: Plan, req: SimRequest, response_id: str, body: Mapping[str, Any]
    ) -> AnthropicStream:
        return AnthropicStream(plan, req.model, "msg_" + response_id)

    def models(self, ids: list[str]) -> bytes:
        data = [
            {
                "type": "model",
                "id": i,
                "display_name": f"{i} (simulated)",
                "created_at": "2025-01-01T00:00:00Z",
            }
            for i in ids
        ]
        return orjson.dumps(
            {
                "data": data,
                "has_more": False,
                "first_id": ids[0] if ids else None,
                "last_id": ids[-1] if ids else None,
            }
        )


def _event(kind: str, payload: Mapping[str, Any]) -> bytes:
    return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(payload) + b"\n\n"


_DELTAS = {
    "reasoning": ("thinking_delta", "thinking"),
    "content": ("text_delta", "text"),
    "tool": ("input_json_delta", "partial_json"),
}


class AnthropicStream:
    """Render one plan as Anthropic SSE events: blocks opened and closed as the piece kind changes."""

    def __init__(self, plan: Plan, model: str, message_id: str) -> None:
        self._plan = plan
        self._model = model
        self._message_id = message_id
        self._index = -1
        self._kind: str | None = None

    def head(self) -> bytes:
        message = {
            "id": self._message_id,
            "type": "message",
            "role": "assistant",
            "model": self._model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": AnthropicWire().usage(self._plan, output_tokens=1),
        }
        return _event("message_start", {"type": "message_start", "message": message}) + _event(
            "ping", {"type": "ping"}
        )

    def _close_block(self) -> bytes:
        if self._kind is None:
            return b""
        out = b""
        if self._kind == "reasoning":
            delta = {"type": "signature_delta", "signature": _signature(self._plan.seed)}
            out = _event(
                "content_block_delta", {"type": "content_block_delta", "index": self._index, "delta": delta}
            )
        self._kind = None
        return out + _event("content_block_stop", {"type": "content_block_stop", "index": self._index})

    def _open_block(self, kind: str) -> bytes:
        self._index += 1
        self._kind = kind
        if kind == "reasoning":
            block: dict[str, Any] = {"type": "thinking", "thinking": ""}
        elif kind == "content":
            block = {"type": "text", "text": ""}
        else:
            call = self._plan.tool_call
            assert call is not None
            block = {"type": "tool_use", "id": "toolu_" + call.call_id, "name": call.name, "input": {}}
        return _event(
            "content_block_start",
            {"type": "content_block_start", "index": self._index, "content_block": block},
        )

    def piece(self, kind: str, fragment: str) -> bytes:
        out = b""
        if kind != self._kind:
            out = self._close_block() + self._open_block(kind)
        delta_type, field = _DELTAS[kind]
        delta = {"type": delta_type, field: fragment}
        return out + _event(
            "content_block_delta", {"type": "content_block_delta", "index": self._index, "delta": delta}
        )

    def tail(self) -> bytes:
        plan = self._plan
        delta = {"stop_reason": STOP_REASONS[plan.finish], "stop_sequence": None}
        return (
            self._close_block()
            + _event(
                "message_delta",
                {"type": "message_delta", "delta": delta, "usage": {"output_tokens": plan.completion_tokens}},
            )
            + _event("message_stop", {"type": "message_stop"})
        )

    def garbage(self) -> bytes:
        return b"event: content_block_delta\ndata: {this is not json\n\n"
