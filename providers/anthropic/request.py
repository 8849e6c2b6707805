"""OpenAI-shaped chat-completions body → Anthropic Messages request."""

from __future__ import annotations

from typing import Any

import orjson

from ..base import CallOptions
from ..content import content_text

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096  # Anthropic requires max_tokens; OpenAI callers often leave it out
MIN_THINKING_BUDGET = 1024  # Anthropic's floor for thinking.budget_tokens
THINKING_ANSWER_ROOM = 256  # the least of max_tokens left for the answer beside a thinking budget
MIN_THINKING_MAX_TOKENS = MIN_THINKING_BUDGET + THINKING_ANSWER_ROOM  # below this, thinking stays off
DEFAULT_BUDGET_CAP = 16000
# reasoning_effort as the share of max_tokens the thinking budget may take (minimal: Anthropic's floor).
EFFORT_SHARES = {"minimal": 0.0, "low": 0.25, "medium": 0.5, "high": 0.75, "xhigh": 1.0}
JSON_INSTRUCTION = "Respond with only a JSON document: no prose before or after it, no code fences."
# OpenAI fields the Messages API has no equivalent for: never sent, reported as dropped.
UNSUPPORTED = ("frequency_penalty", "presence_penalty", "seed", "logit_bias", "logprobs", "top_logprobs")
MAX_TEMPERATURE = 1.0  # Anthropic's temperature runs from 0 to 1 (OpenAI's from 0 to 2)
THINKING_TOP_P = 0.95  # while thinking, Anthropic takes top_p only from 0.95 to 1


def _image_block(part: dict[str, Any]) -> dict[str, Any]:
    image = part.get("image_url")
    url = image.get("url", "") if isinstance(image, dict) else str(image or "")
    if url.startswith("data:"):
        header, _, data = url.partition(",")
        media_type = header[5:].split(";", 1)[0] or "image/png"
        return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _user_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks: list[dict[str, Any]] = []
    for part in content or ():
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            blocks.append({"type": "text", "text": part.get("text", "")})
        elif part.get("type") == "image_url":
            blocks.append(_image_block(part))
        else:
            # Passed on as written: Anthropic refuses what it does not know, and says why.
            blocks.append(part)
    return blocks


def _tool_input(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    try:
        value = orjson.loads(arguments or "{}")
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _assistant_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    # reasoning_content is deliberately not forwarded: the spec accepts it back and drops it.
    blocks: list[dict[str, Any]] = []
    text = content_text(message.get("content"))
    if text:
        blocks.append({"type": "text", "text": text})
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id", ""),
                "name": function.get("name", ""),
                "input": _tool_input(function.get("arguments")),
            }
        )
    return blocks


def _tool_result_block(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    result: Any = (
        content
        if isinstance(content, str)
        else [
            {"type": "text", "text": p.get("text", "")}
            for p in content or ()
            if isinstance(p, dict) and p.get("type") == "text"
        ]
    )
    return {"type": "tool_result", "tool_use_id": message.get("tool_call_id", ""), "content": result}


def _messages(messages: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role in ("system", "developer"):
            system.append(content_text(message.get("content")))
            continue
        if role == "assistant":
            turn_role, blocks = "assistant", _assistant_blocks(message)
        elif role == "tool":
            turn_role, blocks = "user", [_tool_result_block(message)]
        else:
            turn_role, blocks = "user", _user_blocks(message.get("content"))
        if not blocks:
            continue
        # Anthropic wants alternating turns: tool results (and text after them) share one user turn.
        if out and out[-1]["role"] == turn_role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": turn_role, "content": blocks})
    return system, out


def _tool_choice(choice: Any, parallel: Any) -> dict[str, Any] | None:
    mapped: dict[str, Any] | None
    if choice == "auto":
        mapped = {"type": "auto"}
    elif choice == "required":
        mapped = {"type": "any"}
    elif choice == "none":
        mapped = {"type": "none"}
    elif isinstance(choice, dict) and choice.get("type") == "function":
        mapped = {"type": "tool", "name": (choice.get("function") or {}).get("name", "")}
    elif isinstance(choice, dict) and choice.get("type") == "allowed_tools":
        # The tools are narrowed to the allowed ones (see _tools); the mode says whether one must be called.
        mode = (choice.get("allowed_tools") or {}).get("mode")
        mapped = {"type": "any" if mode == "required" else "auto"}
    else:
        mapped = None
    if parallel is False and (mapped is None or mapped["type"] != "none"):
        mapped = {**(mapped or {"type": "auto"}), "disable_parallel_tool_use": True}
    return mapped


def _allowed_names(choice: Any) -> set[str] | None:
    """Return the tool names an `allowed_tools` choice allows, or None when the choice is not one."""
    if not (isinstance(choice, dict) and choice.get("type") == "allowed_tools"):
        return None
    listed = (choice.get("allowed_tools") or {}).get("tools") or ()
    return {str((t.get("function") or {}).get("name", "")) for t in listed if isinstance(t, dict)}


def _is_function_tool(tool: Any) -> bool:
    return isinstance(tool, dict) and tool.get("type", "function") == "function" and isinstance(tool.get("function"), dict)


def _tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Return the function tools as Anthropic tools, narrowed to those an `allowed_tools` choice allows."""
    allowed = _allowed_names(body.get("tool_choice"))
    return [
        {
            "name": t["function"]["name"],
            **({"description": t["function"]["description"]} if t["function"].get("description") else {}),
            "input_schema": t["function"].get("parameters") or {"type": "object", "properties": {}},
        }
        for t in body.get("tools") or ()
        if _is_function_tool(t) and (allowed is None or t["function"]["name"] in allowed)
    ]


def _json_instruction(response_format: Any) -> str | None:
    if not isinstance(response_format, dict):
        return None
    if response_format.get("type") == "json_object":
        return JSON_INSTRUCTION
    if response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        if schema is None:
            return JSON_INSTRUCTION
        return f"{JSON_INSTRUCTION} It must match this JSON schema: {orjson.dumps(schema).decode()}"
    return None


def thinking_budget(max_tokens: int, *, effort: str | None = None) -> int | None:
    """Return the thinking budget that fits inside max_tokens, leaving room for the answer, or None when
    even Anthropic's minimum does not fit (thinking then stays off). Thinking counts toward max_tokens,
    which is never raised. `effort` sets a share of max_tokens; else half, capped."""
    room = max_tokens - THINKING_ANSWER_ROOM
    if room < MIN_THINKING_BUDGET:
        return None
    if effort in EFFORT_SHARES:
        budget = int(max_tokens * EFFORT_SHARES[effort])
    else:
        budget = min(max_tokens // 2, DEFAULT_BUDGET_CAP)
    return max(MIN_THINKING_BUDGET, min(budget, room))


def _max_tokens(body: dict[str, Any]) -> int:
    return body.get("max_completion_tokens") or body.get("max_tokens") or DEFAULT_MAX_TOKENS


def _thinking(body: dict[str, Any], thinking: bool | None) -> int | None:
    """Return the thinking budget the request is sent with, or None when it goes without thinking: thinking
    was not asked for, a tool call is forced (Anthropic refuses thinking with it), or no budget fits."""
    if thinking is not True or _forced_tool(body):
        return None
    return thinking_budget(_max_tokens(body), effort=body.get("reasoning_effort"))


def _forced_tool(body: dict[str, Any]) -> bool:
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "allowed_tools":
        return (choice.get("allowed_tools") or {}).get("mode") == "required"
    return choice == "required" or (isinstance(choice, dict) and choice.get("type") == "function")


def _temperature(body: dict[str, Any], thinks: bool) -> float | int | None:
    """Return the temperature to send: OpenAI's above Anthropic's maximum is sent as the maximum; while
    thinking only the default is accepted, so none is sent."""
    temperature = body.get("temperature")
    if temperature is None or thinks:
        return None
    return min(temperature, MAX_TEMPERATURE)


def _top_p(body: dict[str, Any], thinks: bool) -> float | None:
    """Return the top_p to send: Claude takes temperature or top_p, not both (temperature wins), and while
    thinking only from 0.95 up."""
    top_p = body.get("top_p")
    if top_p is None or _temperature(body, thinks) is not None or (thinks and top_p < THINKING_TOP_P):
        return None
    return top_p


def not_forwarded(body: dict[str, Any], thinking: bool | None) -> frozenset[str]:
    """Return the OpenAI fields of `body` that the Anthropic request will not carry, for `dropped_params`.

    `thinking` is the switch the request is sent with (True on, False off, None the model's default: off)."""
    thinks = _thinking(body, thinking) is not None
    out = {name for name in UNSUPPORTED if body.get(name) is not None}
    effort = body.get("reasoning_effort")
    if effort is not None and not (thinks and effort in EFFORT_SHARES):
        out.add("reasoning_effort")  # it sets the thinking budget, and only that
    if body.get("temperature") is not None and _temperature(body, thinks) is None and body["temperature"] != 1:
        out.add("temperature")
    if body.get("top_p") is not None and _top_p(body, thinks) is None:
        out.add("top_p")
    if any(not _is_function_tool(t) for t in body.get("tools") or ()):
        out.add("tools")  # custom (free-form) tools have no Anthropic equivalent
    choice = body.get("tool_choice")
    if choice is not None and _tool_choice(choice, None) is None:
        out.add("tool_choice")
    return frozenset(out)


def to_anthropic_request(body: dict[str, Any], options: CallOptions) -> dict[str, Any]:
    """Return the Anthropic Messages body for an OpenAI chat-completions body (without `stream`).

    Thinking is enabled only when `options.thinking is True` and a budget fits inside the caller's
    max_tokens (see thinking_budget); max_tokens is sent as the caller set it. What is not carried is
    exactly `not_forwarded(body, options.thinking)`."""
    system, messages = _messages(body.get("messages") or [])
    max_tokens = _max_tokens(body)
    out: dict[str, Any] = {"model": body.get("model"), "messages": messages, "max_tokens": max_tokens}
    instruction = _json_instruction(body.get("response_format"))
    if instruction:
        system.append(instruction)
    if system:
        out["system"] = "\n\n".join(s for s in system if s)
    stop = body.get("stop")
    if stop:
        out["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    budget = _thinking(body, options.thinking)
    thinks = budget is not None
    if (temperature := _temperature(body, thinks)) is not None:
        out["temperature"] = temperature
    if (top_p := _top_p(body, thinks)) is not None:
        out["top_p"] = top_p
    tools = _tools(body)
    if tools:
        out["tools"] = tools
    choice = _tool_choice(body.get("tool_choice"), body.get("parallel_tool_calls"))
    if choice is not None and (tools or choice["type"] == "none"):
        out["tool_choice"] = choice
    if body.get("user"):
        out["metadata"] = {"user_id": str(body["user"])}
    if budget is not None:
        out["thinking"] = {"type": "enabled", "budget_tokens": budget}
    return out
