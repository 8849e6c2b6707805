"""Turn upstream chunks into one chat.completion, and upstream messages into our response shape."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

# Where thinking used up the tokens: said on the routing object (whole) or the usage event (stream).
TRUNCATED_HINT = (
    "The answer stopped at max_tokens while the model was thinking; thinking counts toward max_tokens. "
    "Raise max_tokens, or send extended_thinking: false for a direct answer."
)
MESSAGE_FIELDS = ("role", "content", "reasoning_content", "tool_calls", "refusal", "function_call")


def message_clean(message: dict[str, Any]) -> dict[str, Any]:
    """Keep the OpenAI message fields (and reasoning_content); drop provider-specific extras."""
    out: dict[str, Any] = {"role": message.get("role") or "assistant", "content": message.get("content")}
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if reasoning:
        out["reasoning_content"] = reasoning
    if message.get("tool_calls"):
        out["tool_calls"] = message["tool_calls"]
    if message.get("refusal"):
        out["refusal"] = message["refusal"]
    if message.get("function_call"):
        out["function_call"] = message["function_call"]
    return out


@dataclass(frozen=True, slots=True)
class Choice:
    """One choice of an upstream answer, its message cleaned to the OpenAI fields."""

    message: dict[str, Any]
    finish_reason: str | None
    logprobs: Any = None
    repair: dict[str, Any] | None = None  # what structured-output repair did, when there is something to report

    @property
    def cut_before_content(self) -> bool:
        return self.finish_reason == "length" and not self.message.get("content") and not self.message.get("tool_calls")

    @property
    def truncated_by_thinking(self) -> bool:
        return self.finish_reason == "length" and bool(self.message.get("reasoning_content"))


def choices_of(result: dict[str, Any]) -> tuple[Choice, ...]:
    """Return the choices of an upstream chat.completion."""
    return tuple(Choice(message_clean(choice.get("message") or {}), choice.get("finish_reason"), choice.get("logprobs"))
                 for choice in result["choices"])


class ChunkAssembler:
    """Accumulates streamed chunks of one choice into a chat.completion dict."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.tool_calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.refusal: list[str] = []
        # When the first token (reasoning or answer) and the first answer token arrived (perf_counter),
        # for the route's latency evidence; stamped once each, so a chunk pays one test.
        self.first_token_at: float | None = None
        self.first_answer_at: float | None = None

    def first_tokens_ms(self, started: float) -> dict[str, int]:
        """Return the attempt's times to first token and to first answer token, in ms from `started`."""
        out = {}
        if self.first_token_at is not None:
            out["first_token_ms"] = int((self.first_token_at - started) * 1000)
        if self.first_answer_at is not None:
            out["first_answer_token_ms"] = int((self.first_answer_at - started) * 1000)
        return out

    def add(self, chunk: dict[str, Any]) -> tuple[bool, bool, bool]:
        """Accumulate one chunk; return whether it carries (content, a tool call or a refusal),
        (reasoning), (a finish_reason): one pass over the chunk for both jobs."""
        usage = chunk.get("usage")
        if usage:
            self.usage = usage
        content = reasoning = finish = False
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta")
            if delta:
                text = delta.get("content")
                if text:
                    self.content.append(text)
                    content = True
                if text is None or len(delta) > 1 + ("role" in delta):  # anything besides role and content
                    thought = delta.get("reasoning_content") or delta.get("reasoning")
                    if thought:
                        self.reasoning.append(thought)
                        reasoning = True
                    if delta.get("refusal"):
                        self.refusal.append(delta["refusal"])
                        content = True
                    calls = delta.get("tool_calls")
                    if calls:
                        content = True
                        self._add_tool_calls(calls)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
                finish = True
        if (content or reasoning) and self.first_answer_at is None:
            now = time.perf_counter()
            if self.first_token_at is None:
                self.first_token_at = now
            if content:
                self.first_answer_at = now
        return content, reasoning, finish

    def _add_tool_calls(self, calls: list[dict[str, Any]]) -> None:
        for call in calls:
            index = call.get("index", 0)
            slot = self.tool_calls.setdefault(index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
            if call.get("id"):
                slot["id"] = call["id"]
            fn = call.get("function") or {}
            if fn.get("name"):
                slot["function"]["name"] += fn["name"]
            if fn.get("arguments"):
                slot["function"]["arguments"] += fn["arguments"]

    def completion(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.content) if self.content else None}
        if self.reasoning:
            message["reasoning_content"] = "".join(self.reasoning)
        if self.tool_calls:
            message["tool_calls"] = [self.tool_calls[i] for i in sorted(self.tool_calls)]
        if self.refusal:
            message["refusal"] = "".join(self.refusal)
        body: dict[str, Any] = {
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason or "stop"}],
        }
        if self.usage:
            body["usage"] = self.usage
        return body
