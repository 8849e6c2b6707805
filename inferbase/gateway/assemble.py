"""Turn upstream chunks into one chat.completion, and upstream messages into our response shape."""

from __future__ import annotations

from typing import Any

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


class ChunkAssembler:
    """Accumulates streamed chunks of one choice into a chat.completion dict."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.tool_calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.refusal: list[str] = []

    def add(self, chunk: dict[str, Any]) -> None:
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            if delta.get("content"):
                self.content.append(delta["content"])
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning:
                self.reasoning.append(reasoning)
            if delta.get("refusal"):
                self.refusal.append(delta["refusal"])
            for call in delta.get("tool_calls") or ():
                index = call.get("index", 0)
                slot = self.tool_calls.setdefault(index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
                if call.get("id"):
                    slot["id"] = call["id"]
                fn = call.get("function") or {}
                if fn.get("name"):
                    slot["function"]["name"] += fn["name"]
                if fn.get("arguments"):
                    slot["function"]["arguments"] += fn["arguments"]
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]

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
