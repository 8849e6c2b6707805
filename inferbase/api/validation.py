"""Validation of the chat-completions body into a `ChatRequest`.

Every field of OpenAI's chat-completions request is accepted; each is forwarded, mapped, or
reported in `usage.dropped_params`. A field outside OpenAI's and Inferbase's is a 422 naming it;
a wrong type or an out-of-range value is a 400 naming the param.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inferbase.gateway.errors import ApiError
from inferbase.gateway.request import ChatRequest
from providers.content import content_text
from routing.decision import RoutingOverrides

OBJECTIVES = ("quality", "cost", "latency", "balanced")
QUALITY_FLOORS = ("none", "basic", "standard", "strict")
ROLES = ("system", "developer", "user", "assistant", "tool", "function")
MESSAGE_KEYS = frozenset(
    {"role", "content", "name", "tool_calls", "tool_call_id", "function_call", "refusal", "audio",
     "annotations", "reasoning_content"}
)
# Sent back by clients but never forwarded to a model.
MESSAGE_KEYS_NOT_FORWARDED = frozenset({"reasoning_content", "annotations", "audio", "refusal"})
PART_TYPES = ("text", "image_url", "input_audio", "file", "refusal")
# Accepted, but no provider we route to takes them the same way: reported in usage.dropped_params.
NOT_FORWARDED = frozenset(
    {"metadata", "store", "service_tier", "modalities", "audio", "prediction", "prompt_cache_key",
     "prompt_cache_retention", "safety_identifier", "verbosity", "web_search_options"}
)
# Choices per request: above this, each costs a whole upstream call where the provider cannot make
# several in one, so the client is asked to send several requests instead.
MAX_CHOICES = 8


def _bad(param: str, message: str, code: str = "invalid_value") -> ApiError:
    return ApiError(400, message, code=code, param=param)


def _type_name(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def _check_type(param: str, value: Any, kinds: tuple[type, ...], label: str) -> None:
    if isinstance(value, bool) and bool not in kinds:
        raise _bad(param, f"Invalid type for '{param}': expected {label}, but got a boolean.", "invalid_type")
    if not isinstance(value, kinds):
        raise _bad(param, f"Invalid type for '{param}': expected {label}, but got {_type_name(value)}.", "invalid_type")


def _number(lo: float, hi: float) -> Callable[[str, Any], None]:
    def check(param: str, value: Any) -> None:
        _check_type(param, value, (int, float), "a number")
        if not lo <= value <= hi:
            raise _bad(param, f"Invalid value for '{param}': {value} is not between {lo:g} and {hi:g}.")

    return check


def _integer(lo: int, hi: int | None = None) -> Callable[[str, Any], None]:
    def check(param: str, value: Any) -> None:
        _check_type(param, value, (int,), "an integer")
        if value < lo or (hi is not None and value > hi):
            bound = f"between {lo} and {hi}" if hi is not None else f"at least {lo}"
            raise _bad(param, f"Invalid value for '{param}': {value} must be {bound}.")

    return check


def _boolean(param: str, value: Any) -> None:
    _check_type(param, value, (bool,), "a boolean")


def _string(param: str, value: Any) -> None:
    _check_type(param, value, (str,), "a string")


def _object(param: str, value: Any) -> None:
    _check_type(param, value, (dict,), "an object")


def _array(param: str, value: Any) -> None:
    _check_type(param, value, (list,), "an array")


def _enum(*choices: str) -> Callable[[str, Any], None]:
    def check(param: str, value: Any) -> None:
        _string(param, value)
        if value not in choices:
            raise _bad(param, f"Invalid value for '{param}': '{value}'. Supported values are: {', '.join(repr(c) for c in choices)}.")

    return check


def _stop(param: str, value: Any) -> None:
    if value is None or isinstance(value, str):
        return
    _array(param, value)
    if len(value) > 4:
        raise _bad(param, f"Invalid value for '{param}': at most 4 stop sequences are allowed.")
    for i, item in enumerate(value):
        _string(f"{param}[{i}]", item)


def _logit_bias(param: str, value: Any) -> None:
    _object(param, value)
    for key, bias in value.items():
        if not str(key).isdigit():
            raise _bad(f"{param}.{key}", f"Invalid key in '{param}': token ids must be integers, got {key!r}.")
        _number(-100, 100)(f"{param}.{key}", bias)


def _tools(param: str, value: Any) -> None:
    _array(param, value)
    for i, tool in enumerate(value):
        p = f"{param}[{i}]"
        _object(p, tool)
        kind = tool.get("type", "function")
        if kind == "function":
            fn = tool.get("function")
            if fn is None:
                raise _bad(f"{p}.function", f"Missing required parameter: '{p}.function'.", "missing_required_parameter")
            _object(f"{p}.function", fn)
            _function_def(f"{p}.function", fn)
        elif kind != "custom":
            raise _bad(f"{p}.type", f"Invalid value for '{p}.type': '{kind}'. Supported values are: 'function', 'custom'.")


def _function_def(param: str, fn: dict[str, Any]) -> None:
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        raise _bad(f"{param}.name", f"Missing required parameter: '{param}.name'.", "missing_required_parameter")
    if "parameters" in fn and fn["parameters"] is not None:
        _object(f"{param}.parameters", fn["parameters"])
    if "description" in fn and fn["description"] is not None:
        _string(f"{param}.description", fn["description"])


def _functions(param: str, value: Any) -> None:
    _array(param, value)
    for i, fn in enumerate(value):
        _object(f"{param}[{i}]", fn)
        _function_def(f"{param}[{i}]", fn)


def _tool_choice(param: str, value: Any) -> None:
    if isinstance(value, str):
        _enum("none", "auto", "required")(param, value)
        return
    _object(param, value)
    kind = value.get("type")
    if kind not in ("function", "allowed_tools", "custom"):
        raise _bad(f"{param}.type", f"Invalid value for '{param}.type': {kind!r}.")


def _function_call(param: str, value: Any) -> None:
    if isinstance(value, str):
        _enum("none", "auto")(param, value)
        return
    _object(param, value)
    if not isinstance(value.get("name"), str):
        raise _bad(f"{param}.name", f"Missing required parameter: '{param}.name'.", "missing_required_parameter")


def _response_format(param: str, value: Any) -> None:
    _object(param, value)
    kind = value.get("type")
    if kind not in ("text", "json_object", "json_schema"):
        raise _bad(f"{param}.type", f"Invalid value for '{param}.type': {kind!r}. Supported values are: 'text', 'json_object', 'json_schema'.")
    if kind == "json_schema":
        schema = value.get("json_schema")
        if not isinstance(schema, dict):
            raise _bad(f"{param}.json_schema", f"Missing required parameter: '{param}.json_schema'.", "missing_required_parameter")
        if not isinstance(schema.get("name"), str):
            raise _bad(f"{param}.json_schema.name", f"Missing required parameter: '{param}.json_schema.name'.", "missing_required_parameter")
        if "schema" in schema and not isinstance(schema["schema"], dict):
            raise _bad(f"{param}.json_schema.schema", f"Invalid type for '{param}.json_schema.schema': expected an object.", "invalid_type")


def _stream_options(param: str, value: Any) -> None:
    if value is None:
        return
    _object(param, value)
    for key, item in value.items():
        if key not in ("include_usage", "include_obfuscation"):
            raise ApiError(422, f"Unrecognized request argument supplied: {param}.{key}", code="unknown_parameter", param=f"{param}.{key}")
        _boolean(f"{param}.{key}", item)


def _string_list(param: str, value: Any) -> None:
    _array(param, value)
    for i, item in enumerate(value):
        _string(f"{param}[{i}]", item)


def _metadata(param: str, value: Any) -> None:
    _object(param, value)
    for key, item in value.items():
        _string(f"{param}.{key}", item)


def _any_object_or_null(param: str, value: Any) -> None:
    if value is not None:
        _object(param, value)


FIELDS: dict[str, Callable[[str, Any], None]] = {
    "frequency_penalty": _number(-2, 2),
    "presence_penalty": _number(-2, 2),
    "temperature": _number(0, 2),
    "top_p": _number(0, 1),
    "max_tokens": _integer(1),
    "max_completion_tokens": _integer(1),
    "n": _integer(1, 128),
    "seed": _integer(-(2**63), 2**63 - 1),
    "stop": _stop,
    "logit_bias": _logit_bias,
    "logprobs": _boolean,
    "top_logprobs": _integer(0, 20),
    "tools": _tools,
    "tool_choice": _tool_choice,
    "parallel_tool_calls": _boolean,
    "functions": _functions,
    "function_call": _function_call,
    "response_format": _response_format,
    "stream": _boolean,
    "stream_options": _stream_options,
    "user": _string,
    "metadata": _metadata,
    "store": _boolean,
    "service_tier": _enum("auto", "default", "flex", "scale", "priority"),
    "reasoning_effort": _enum("none", "minimal", "low", "medium", "high", "xhigh"),
    "modalities": _string_list,
    "audio": _any_object_or_null,
    "prediction": _any_object_or_null,
    "prompt_cache_key": _string,
    "prompt_cache_retention": _enum("in-memory", "24h"),
    "safety_identifier": _string,
    "verbosity": _enum("low", "medium", "high"),
    "web_search_options": _any_object_or_null,
    "extended_thinking": _boolean,
}
# Forwarded as written to OpenAI-dialect upstreams.
FORWARDED = (
    "frequency_penalty", "presence_penalty", "temperature", "top_p", "seed", "stop", "logit_bias", "logprobs",
    "top_logprobs", "tools", "tool_choice", "parallel_tool_calls", "response_format", "user", "reasoning_effort",
)


def _routing_overrides(value: Any) -> RoutingOverrides:
    if value is None:
        return RoutingOverrides()
    _object("routing", value)
    known = {
        "optimize": _enum(*OBJECTIVES),
        "model_pool": _string_list,
        "pool": _string_list,
        "quality_floor": _enum(*QUALITY_FLOORS),
        "max_cost_micros": _integer(0),
        "first_token_timeout_ms": _integer(1),
        "deadline_ms": _integer(1),
        "allowed_providers": _string_list,
        "chain_length": _integer(1, 10),
        "prefer_cache": _boolean,
    }
    for key, item in value.items():
        check = known.get(key)
        if check is None:
            raise ApiError(422, f"Unrecognized request argument supplied: routing.{key}", code="unknown_parameter", param=f"routing.{key}")
        if item is not None:
            check(f"routing.{key}", item)
    pool = value.get("model_pool", value.get("pool"))
    providers = value.get("allowed_providers")
    return RoutingOverrides(
        optimize=value.get("optimize"),
        model_pool=tuple(pool) if pool is not None else None,
        quality_floor=value.get("quality_floor"),
        max_cost_micros=value.get("max_cost_micros"),
        first_token_timeout_ms=value.get("first_token_timeout_ms"),
        deadline_ms=value.get("deadline_ms"),
        allowed_providers=tuple(providers) if providers is not None else None,
        chain_length=value.get("chain_length"),
        prefer_cache=value.get("prefer_cache"),
    )


def _message(i: int, message: Any) -> tuple[dict[str, Any], bool]:
    """Validate one message; return its forwardable form and whether it carries an image."""
    p = f"messages[{i}]"
    _object(p, message)
    for key in message:
        if key not in MESSAGE_KEYS:
            raise ApiError(422, f"Unrecognized request argument supplied: {p}.{key}", code="unknown_parameter", param=f"{p}.{key}")
    role = message.get("role")
    if role is None:
        raise _bad(f"{p}.role", f"Missing required parameter: '{p}.role'.", "missing_required_parameter")
    _enum(*ROLES)(f"{p}.role", role)
    content = message.get("content")
    has_image = False
    if content is None:
        if role != "assistant" or not (message.get("tool_calls") or message.get("function_call")):
            raise _bad(f"{p}.content", f"Missing required parameter: '{p}.content'.", "missing_required_parameter")
    elif isinstance(content, list):
        for j, part in enumerate(content):
            pp = f"{p}.content[{j}]"
            _object(pp, part)
            kind = part.get("type")
            if kind not in PART_TYPES:
                raise _bad(f"{pp}.type", f"Invalid value for '{pp}.type': {kind!r}. Supported values are: {', '.join(PART_TYPES)}.")
            if kind == "text":
                _string(f"{pp}.text", part.get("text"))
            elif kind == "image_url":
                image = part.get("image_url")
                _object(f"{pp}.image_url", image)
                _string(f"{pp}.image_url.url", image.get("url"))
                has_image = True
    elif not isinstance(content, str):
        raise _bad(f"{p}.content", f"Invalid type for '{p}.content': expected a string or an array of content parts, but got {_type_name(content)}.", "invalid_type")
    if role == "tool":
        _string(f"{p}.tool_call_id", message.get("tool_call_id"))
    if "tool_calls" in message and message["tool_calls"] is not None:
        _array(f"{p}.tool_calls", message["tool_calls"])
        for j, call in enumerate(message["tool_calls"]):
            cp = f"{p}.tool_calls[{j}]"
            _object(cp, call)
            _string(f"{cp}.id", call.get("id"))
            _object(f"{cp}.function", call.get("function"))
    if "name" in message and message["name"] is not None:
        _string(f"{p}.name", message["name"])
    if "reasoning_content" in message and message["reasoning_content"] is not None:
        _string(f"{p}.reasoning_content", message["reasoning_content"])
    forward = {k: v for k, v in message.items() if k not in MESSAGE_KEYS_NOT_FORWARDED}
    return forward, has_image


def _mentions_json(messages: tuple[dict[str, Any], ...]) -> bool:
    return any("json" in content_text(message.get("content")).lower() for message in messages)


def chat_request_parse(body: Any) -> ChatRequest:
    """Validate a decoded JSON body; raise ApiError (400/422) naming the offending param."""
    if not isinstance(body, dict):
        raise ApiError(400, "The request body must be a JSON object.", code="invalid_json")
    for key in body:
        if key not in FIELDS and key not in ("model", "messages", "routing"):
            raise ApiError(422, f"Unrecognized request argument supplied: {key}", code="unknown_parameter", param=key)
    model = body.get("model")
    if model is None:
        raise _bad("model", "Missing required parameter: 'model'.", "missing_required_parameter")
    _string("model", model)
    if not model:
        raise _bad("model", "Invalid value for 'model': it must not be empty.")
    raw_messages = body.get("messages")
    if raw_messages is None:
        raise _bad("messages", "Missing required parameter: 'messages'.", "missing_required_parameter")
    _array("messages", raw_messages)
    if not raw_messages:
        raise _bad("messages", "Invalid value for 'messages': it must contain at least one message.")
    for key, check in FIELDS.items():
        value = body.get(key)
        if value is not None:
            check(key, value)
    n = body.get("n") or 1
    if n > MAX_CHOICES:
        raise _bad("n", f"Invalid value for 'n': {n} is above the limit of {MAX_CHOICES} choices per request; "
                        "send several requests for more.")
    messages: list[dict[str, Any]] = []
    has_images = False
    for i, raw in enumerate(raw_messages):
        forward, image = _message(i, raw)
        messages.append(forward)
        has_images = has_images or image
    routing = _routing_overrides(body.get("routing"))

    forward: dict[str, Any] = {k: body[k] for k in FORWARDED if body.get(k) is not None}
    max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
    if max_tokens is not None:
        forward["max_tokens"] = max_tokens
    dropped = {k for k in NOT_FORWARDED if body.get(k) is not None}
    # The deprecated functions/function_call are mapped to tools/tool_choice, unless those are given too.
    if body.get("functions"):
        if "tools" in forward:
            dropped.add("functions")
        else:
            forward["tools"] = [{"type": "function", "function": fn} for fn in body["functions"]]
    if body.get("function_call") is not None:
        fc = body["function_call"]
        if "tool_choice" in forward:
            dropped.add("function_call")
        else:
            forward["tool_choice"] = fc if isinstance(fc, str) else {"type": "function", "function": {"name": fc["name"]}}
    stream_options = body.get("stream_options") or {}
    if stream_options.get("include_obfuscation"):
        dropped.add("stream_options.include_obfuscation")  # our chunks carry no obfuscation padding

    response_format = body.get("response_format") or {}
    rf_type = response_format.get("type") if response_format.get("type") != "text" else None
    message_tuple = tuple(messages)
    if rf_type == "json_object" and not _mentions_json(message_tuple):
        raise _bad(
            "messages",
            "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'. "
            "Fix: ask for JSON in the system or user message (e.g. 'Answer in JSON.'), or send 'response_format' "
            "of type 'json_schema' with the schema you want.",
        )
    last = raw_messages[-1]
    tool_loop = last.get("role") in ("tool", "function") or bool(last.get("role") == "assistant" and last.get("tool_calls"))
    return ChatRequest(
        model=model,
        messages=message_tuple,
        stream=bool(body.get("stream")),
        include_usage=bool(stream_options.get("include_usage")),
        max_tokens=max_tokens,
        extended_thinking=body.get("extended_thinking"),
        routing=routing,
        response_format_type=rf_type,
        json_schema=(response_format.get("json_schema") or {}).get("schema") if rf_type == "json_schema" else None,
        has_tools=bool(forward.get("tools")),
        has_images=has_images,
        tool_loop=tool_loop,
        has_history=any(m.get("role") == "assistant" for m in raw_messages),
        forward=forward,
        dropped_params=tuple(sorted(dropped)),
        n=n,
    )
