"""The OpenAPI 3.1 description of the public API, built from the validators so it cannot drift."""

from __future__ import annotations

from functools import cache
from typing import Any

from routing.decision import COMPLEXITIES, TASKS

from .validation import FIELDS, MAX_CHOICES, OBJECTIVES, QUALITY_FLOORS, ROLES

ERROR = {"$ref": "#/components/schemas/Error"}
_TYPES: dict[str, dict[str, Any]] = {
    "temperature": {"type": "number", "minimum": 0, "maximum": 2},
    "top_p": {"type": "number", "minimum": 0, "maximum": 1},
    "frequency_penalty": {"type": "number", "minimum": -2, "maximum": 2},
    "presence_penalty": {"type": "number", "minimum": -2, "maximum": 2},
    "max_tokens": {"type": "integer", "minimum": 1},
    "max_completion_tokens": {"type": "integer", "minimum": 1},
    "n": {"type": "integer", "minimum": 1, "maximum": MAX_CHOICES},
    "seed": {"type": "integer"},
    "top_logprobs": {"type": "integer", "minimum": 0, "maximum": 20},
    "stop": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}, "maxItems": 4}]},
    "logprobs": {"type": "boolean"},
    "parallel_tool_calls": {"type": "boolean"},
    "stream": {"type": "boolean"},
    "store": {"type": "boolean"},
    "extended_thinking": {"type": "boolean", "description": "Inferbase: false asks for a direct answer."},
    "user": {"type": "string"},
    "prompt_cache_key": {"type": "string"},
    "safety_identifier": {"type": "string"},
    "modalities": {"type": "array", "items": {"type": "string"}},
    "tools": {"type": "array", "items": {"type": "object"}},
    "functions": {"type": "array", "items": {"type": "object"}},
    "tool_choice": {"oneOf": [{"type": "string", "enum": ["none", "auto", "required"]}, {"type": "object"}]},
    "function_call": {"oneOf": [{"type": "string", "enum": ["none", "auto"]}, {"type": "object"}]},
    "response_format": {"type": "object", "properties": {"type": {"enum": ["text", "json_object", "json_schema"]}}},
    "stream_options": {"type": "object", "properties": {"include_usage": {"type": "boolean"},
                                                        "include_obfuscation": {"type": "boolean"}},
                       "additionalProperties": False},
    "service_tier": {"type": "string", "enum": ["auto", "default", "flex", "scale", "priority"]},
    "reasoning_effort": {"type": "string", "enum": ["none", "minimal", "low", "medium", "high", "xhigh"]},
    "verbosity": {"type": "string", "enum": ["low", "medium", "high"]},
    "prompt_cache_retention": {"type": "string", "enum": ["in-memory", "24h"]},
}


def _request_schema() -> dict[str, Any]:
    properties: dict[str, Any] = {
        "model": {"type": "string", "description": "auto (or inferbase/auto), or a catalog id (slug or slug:variant)."},
        "messages": {"type": "array", "minItems": 1, "items": {"type": "object", "required": ["role"], "properties": {
            "role": {"type": "string", "enum": list(ROLES)}, "content": {}, "name": {"type": "string"},
            "tool_calls": {"type": "array"}, "tool_call_id": {"type": "string"},
            "reasoning_content": {"type": "string", "description": "Accepted and not forwarded."}}}},
        "routing": {"$ref": "#/components/schemas/RoutingOverrides"},
    }
    for name in FIELDS:
        properties[name] = _TYPES.get(name, {"type": "object"})
    return {"type": "object", "required": ["model", "messages"], "properties": properties,
            "additionalProperties": False}


@cache
def openapi_document() -> dict[str, Any]:
    """Return the OpenAPI document (built once per process)."""
    json_error = {"application/json": {"schema": ERROR}}
    errors = {str(code): {"description": text, "content": json_error} for code, text in (
        (400, "Invalid value or type; `param` names it."), (401, "Missing, unknown or revoked API key."),
        (404, "Unknown model or path."), (413, "Body too large."), (422, "A field outside OpenAI's and Inferbase's."),
        (502, "Every route failed."), (503, "Nothing can serve the request."), (504, "Every route timed out."))}
    model_id = {"name": "model_id", "in": "path", "required": True, "schema": {"type": "string"}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "Inferbase API", "version": "1",
                 "description": "OpenAI-compatible chat completions that pick the model for every request."},
        "servers": [{"url": "/api/v1/inference"}, {"url": "/api/v1"}],
        "components": {
            "securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer", "description": "inf_... API key"}},
            "schemas": {
                "Error": {"type": "object", "required": ["error"], "properties": {"error": {
                    "type": "object", "required": ["message", "type", "code", "param"],
                    "properties": {"message": {"type": "string"}, "type": {"type": "string"},
                                   "code": {"type": ["string", "null"]}, "param": {"type": ["string", "null"]}}}}},
                "ChatCompletionRequest": _request_schema(),
                "RoutingOverrides": {"type": "object", "additionalProperties": False, "properties": {
                    "optimize": {"enum": list(OBJECTIVES)}, "model_pool": {"type": "array", "items": {"type": "string"}},
                    "pool": {"type": "array", "items": {"type": "string"}},
                    "quality_floor": {"enum": list(QUALITY_FLOORS)}, "max_cost_micros": {"type": "integer", "minimum": 0},
                    "first_token_timeout_ms": {"type": "integer", "minimum": 1},
                    "deadline_ms": {"type": "integer", "minimum": 1},
                    "allowed_providers": {"type": "array", "items": {"type": "string"}},
                    "chain_length": {"type": "integer", "minimum": 1, "maximum": 10},
                    "prefer_cache": {"type": "boolean"}}},
                "Routing": {"type": "object", "properties": {
                    "task": {"enum": [*TASKS, None]}, "complexity": {"enum": [*COMPLEXITIES, None]},
                    "model": {"type": "string"}, "decisiveness": {"type": ["number", "null"]},
                    "decisiveness_basis": {"enum": ["lead", "unmeasured", "no_contest", "pinned"]},
                    "routing_time_ms": {"type": "number"}}},
            },
        },
        "paths": {
            "/chat/completions": {"post": {
                "summary": "Create a chat completion (streamed as SSE with stream: true).",
                "security": [{"apiKey": []}],
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/ChatCompletionRequest"}}}},
                "responses": {"200": {"description": "chat.completion, or text/event-stream: routing event, chunks, usage event, [DONE].",
                                      "content": {"application/json": {"schema": {"type": "object"}},
                                                  "text/event-stream": {"schema": {"type": "string"}}}},
                              **errors}}},
            "/models": {"get": {"summary": "auto first, then the servable catalog.", "responses": {
                "200": {"description": "OpenAI model list", "content": {"application/json": {"schema": {"type": "object"}}}},
                "401": errors["401"]}}},
            "/models/{model_id}": {"get": {"summary": "One entry of the model list (OpenAI's retrieve-model shape), "
                                                      "with its evidence: latency and failures per route, "
                                                      "benchmark scores with their sources.",
                                           "parameters": [model_id], "responses": {
                "200": {"description": "OpenAI model object", "content": {"application/json": {"schema": {"type": "object"}}}},
                "401": errors["401"], "404": errors["404"]}}},
            "/models/{model_id}/health": {"get": {"summary": "Liveness of the provider serving the model.",
                                                  "parameters": [model_id], "responses": {
                "200": {"description": "ready, loading or unavailable", "content": {"application/json": {"schema": {
                    "type": "object", "properties": {"model": {"type": "string"},
                                                     "status": {"enum": ["ready", "loading", "unavailable"]}}}}}},
                "404": errors["404"]}}},
            "/routing-decisions/{request_id}": {"get": {
                "summary": "The decision for one routed request, readable as soon as its response has ended.", "security": [{"apiKey": []}],
                "parameters": [{"name": "request_id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {"200": {"description": "the decision", "content": {"application/json": {"schema": {"type": "object"}}}},
                              "401": errors["401"], "404": errors["404"]}}},
            "/usage": {"get": {
                "summary": "Requests, tokens and cost_micros of the caller's organization, by day, model, project or key.",
                "security": [{"apiKey": []}],
                "parameters": [
                    {"name": "from", "in": "query", "required": True, "schema": {"type": "string", "format": "date"}},
                    {"name": "to", "in": "query", "required": True, "schema": {"type": "string", "format": "date"}},
                    {"name": "group_by", "in": "query", "required": False,
                     "schema": {"enum": ["day", "model", "project", "key"], "default": "day"}},
                ],
                "responses": {"200": {"description": "usage: from, to, totals, data",
                                      "content": {"application/json": {"schema": {"type": "object"}}}},
                              "400": errors["400"], "401": errors["401"]}}},
            "/openapi.json": {"get": {"summary": "This document.", "responses": {"200": {"description": "OpenAPI 3.1"}}}},
        },
    }
