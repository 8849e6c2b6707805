"""The API stays describable: the OpenAPI document covers every accepted field and every path."""

from __future__ import annotations

import re

from django.urls import Resolver404, resolve

from inferbase.api.openapi import openapi_document
from inferbase.api.validation import FIELDS


def test_every_accepted_request_field_is_in_the_schema() -> None:
    properties = openapi_document()["components"]["schemas"]["ChatCompletionRequest"]["properties"]
    assert set(FIELDS) | {"model", "messages", "routing"} == set(properties)


def test_every_documented_path_is_served_under_both_base_paths() -> None:
    for path in openapi_document()["paths"]:
        concrete = re.sub(r"\{[^}]+\}", "x", path)
        for base in ("/api/v1/inference", "/api/v1"):
            if path == "/chat/completions":
                from inferbase.asgi import CHAT_PATH

                assert CHAT_PATH.match((base + concrete).removeprefix("/"))
                continue
            try:
                match = resolve(base + concrete)
            except Resolver404:  # pragma: no cover - the assertion below says which
                match = None
            assert match is not None and match.url_name != "" and "not_found" not in match.func.__name__, base + concrete


def test_openapi_is_served(client) -> None:  # type: ignore[no-untyped-def]
    response = client.get("/api/v1/inference/openapi.json")
    assert response.status_code == 200
    assert response.json()["openapi"] == "3.1.0"
