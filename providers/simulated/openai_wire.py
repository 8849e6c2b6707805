"""The OpenAI chat-completions wire format of the simulated upstream."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import orjson

from ..content import content_text
from . import text
from .plan import Plan, SimRequest, WireError

_OPENAI_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "permission_denied"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


class OpenAIWire:
    """Parse OpenAI requests and render plans as `chat.completion` bodies or SSE chunks."""

    name = "openai"

    def error_body(
        self, status: int, message: str, *, kind: str | None = None, code: str | None = None
    ) -> bytes:
        """Return OpenAI's `{"error": {...}}` body for status."""
        default_kind, default_code = _OPENAI_ERROR_TYPES.get(status, ("server_error", None))
        return orjson.dumps(
            {
                "error": {
                    "message": message,
                    "type": kind or default_kind,
                    "param": None,
                    "code": code or default_code,
                }
            }
        )

    def model_not_found(self, model: str) -> WireError:
        return WireError(
            404,
            f"The model `{model}` does not exist or you do not have access to it.",
            code="model_not_found",
        )

    def parse(self, body: Mapping[str, Any], seed_of: Any = text.request_seed) -> SimRequest:
        """Return the SimRequest for an OpenAI body; raise WireError when it is not a valid request."""
        model = body.get("model")
        messages = body.get("messages")
        if not isinstance(model, str) or not model:
            raise WireError(400, "you must provide a model parameter")
        if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
            raise WireError(400, "messages must be a non-empty array of message objects")
        max_tokens = body.get("max_completion_tokens")
        if max_tokens is None:
            max_tokens = body.get("max_tokens")
        if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
            raise WireError(400, "max_tokens must be a positive integer")
        n = body.get("n")
        if n is None:
            n = 1
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 128:
            raise WireError(400, "n must be an integer between 1 and 128")
        kwargs = body.get("chat_template_kwargs") or {}
        reasoning = body.get("reasoning") or {}
        thinking = not (
            body.get("reasoning_effort") == "none"
            or (isinstance(kwargs, dict) and kwargs.get("enable_thinking") is False)
            or (isinstance(reasoning, dict) and reasoning.get("enabled") is False)
            or body.get("thinking") == {"type": "disabled"}
        )
        fmt = body.get("response_format") or {}
        fmt_type = fmt.get("type") if isinstance(fmt, dict) else None
        schema = None
        if fmt_type == "json_schema":
            schema = (fmt.get("json_schema") or {}).get("schema") or {"type": "object"}
        elif fmt_type == "json_object":
            schema = text.shape_in("\n".join(content_text(m.get("content")) for m in messages
                                             if m.get("role") in ("system", "developer", "user")))
        tools = tuple(
            (t["function"]["name"], t["function"].get("parameters") or {})
            for t in body.get("tools") or ()
            if isinstance(t, dict) and isinstance(t.get("function"), dict) and "name" in t["function"]
        )
        choice = body.get("tool_choice")
        if choice == "none":
            tools = ()
        forced_tool = None
        if choice == "required":
            forced_tool = ""
        elif isinstance(choice, dict) and isinstance(choice.get("function"), dict):
            forced_tool = str(choice["function"].get("name") or "")
        last_user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
        prompt_tokens = sum(4 + text.count_tokens(content_text(m.get("content"))) for m in messages)
        if tools:
            prompt_tokens += text.count_tokens(orjson.dumps(body.get("tools")).decode())
        return SimRequest(
            model=model,
            seed=seed_of(model, messages),
            last_user_text=content_text(last_user.get("content")) if last_user else "",
            last_is_user=messages[-1].get("role") == "user",
            tools=tools,
            forced_tool=forced_tool if tools else None,
            thinking=thinking,
            thinking_budget=None,
            max_tokens=max_tokens,
            json_mode=fmt_type in ("json_object", "json_schema"),
            json_schema=schema,
            prompt_tokens=prompt_tokens,
            n=n,
        )

    def has_images(self, body: Mapping[str, Any]) -> bool:
        return any(
            isinstance(m.get("content"), list)
            and any(isinstance(p, dict) and p.get("type") == "image_url" for p in m["content"])
            for m in body.get("messages") or ()
            if isinstance(m, dict)
        )

    def usage(self, plan: Plan, n: int = 1) -> dict[str, Any]:
        return {
            "prompt_tokens": plan.prompt_tokens,
            "completion_tokens": plan.completion_tokens * n,
            "total_tokens": plan.prompt_tokens + plan.completion_tokens * n,
            "prompt_tokens_details": {"cached_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": len(plan.reasoning) * n},
        }

    def complete(self, plan: Plan, req: SimRequest, response_id: str) -> bytes:
        """Return the `chat.completion` body for plan."""
        message: dict[str, Any] = {
            "role": "assistant",
            "content": plan.content_text if plan.content else None,
            "refusal": None,
        }
        if plan.reasoning:
            message["reasoning_content"] = plan.reasoning_text
        if plan.tool_call:
            message["tool_calls"] = [
                {
                    "id": "call_" + plan.tool_call.call_id,
                    "type": "function",
                    "function": {"name": plan.tool_call.name, "arguments": plan.tool_call.arguments},
                }
            ]
        return orjson.dumps(
            {
                "id": "chatcmpl-" + response_id,
                "object": "chat.completion",
                "created": int(time.time()),
                "model": req.model,
                "choices": [{"index": i, "message": message, "logprobs": None, "finish_reason": plan.finish}
                            for i in range(req.n)],
                "usage": self.usage(plan, req.n),
                "system_fingerprint": "simulated",
            }
        )

    def stream(self, plan: Plan, req: SimRequest, response_id: str, body: Mapping[str, Any]) -> OpenAIStream:
        opts = body.get("stream_options")
        include_usage = isinstance(opts, dict) and opts.get("include_usage") is True
        return OpenAIStream(plan, req.model, response_id, include_usage, req.n)

    def models(self, ids: list[str]) -> bytes:
        return orjson.dumps(
            {
                "object": "list",
                "data": [{"id": i, "object": "model", "created": 0, "owned_by": "simulated"} for i in ids],
            }
        )


class OpenAIStream:
    """Render one plan as OpenAI SSE frames, piece by piece."""

    def __init__(self, plan: Plan, model: str, response_id: str, include_usage: bool, n: int = 1) -> None:
        self._plan = plan
        self._include_usage = include_usage
        self._n = n
        self._base = {
            "id": "chatcmpl-" + response_id,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": "simulated",
        }
        self._tool_started = False

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        if self._n > 1:  # one chunk per choice, as OpenAI streams n choices
            return b"".join(self._frame(i, delta, finish) for i in range(self._n))
        return self._frame(0, delta, finish)

    def _frame(self, index: int, delta: dict[str, Any], finish: str | None) -> bytes:
        chunk = {
            **self._base,
            "choices": [{"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if self._include_usage:
            chunk["usage"] = None
        return b"data: " + orjson.dumps(chunk) + b"\n\n"

    def head(self) -> bytes:
        return self._chunk({"role": "assistant", "content": ""})

    def piece(self, kind: str, fragment: str) -> bytes:
        if kind == "reasoning":
            return self._chunk({"reasoning_content": fragment})
        if kind == "content":
            return self._chunk({"content": fragment})
        call = self._plan.tool_call
        assert call is not None
        out = b""
        if not self._tool_started:
            # OpenAI names the call once, with empty arguments, before the argument fragments.
            self._tool_started = True
            out = self._chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_" + call.call_id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": ""},
                        }
                    ]
                }
            )
        return out + self._chunk({"tool_calls": [{"index": 0, "function": {"arguments": fragment}}]})

    def tail(self) -> bytes:
        out = self._chunk({}, self._plan.finish)
        if self._include_usage:
            plan = self._plan
            usage = OpenAIWire().usage(plan, self._n)
            out += b"data: " + orjson.dumps({**self._base, "choices": [], "usage": usage}) + b"\n\n"
        return out + b"data: [DONE]\n\n"

    def garbage(self) -> bytes:
        return b"data: {this is not json\n\n"
