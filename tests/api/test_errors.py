"""Bad input gets a clear error in the documented envelope: never a 500, never a traceback."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from tests.live import LiveGateway

MESSAGES = [{"role": "user", "content": "hi"}]


def _post(http: httpx.Client, body: object) -> httpx.Response:
    return http.post("/chat/completions", json=body)


def _error(response: httpx.Response) -> dict:
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"message", "type", "code", "param"}
    return body["error"]


def test_unknown_field_is_a_422_naming_it(http: httpx.Client) -> None:
    response = _post(http, {"model": "auto", "messages": MESSAGES, "temprature": 0.5})
    assert response.status_code == 422
    error = _error(response)
    assert error["param"] == "temprature"
    assert "temprature" in error["message"]


def test_unknown_routing_field_is_a_422_naming_it(http: httpx.Client) -> None:
    response = _post(http, {"model": "auto", "messages": MESSAGES, "routing": {"optimise": "cost"}})
    assert response.status_code == 422
    assert _error(response)["param"] == "routing.optimise"


def test_unknown_message_field_is_a_422_naming_it(http: httpx.Client) -> None:
    response = _post(http, {"model": "auto", "messages": [{"role": "user", "content": "hi", "mood": "happy"}]})
    assert response.status_code == 422
    assert _error(response)["param"] == "messages[0].mood"


@pytest.mark.parametrize(
    ("field", "value", "param"),
    [
        ("temperature", "hot", "temperature"),
        ("temperature", 3, "temperature"),
        ("top_p", 1.5, "top_p"),
        ("max_tokens", 0, "max_tokens"),
        ("max_tokens", True, "max_tokens"),
        ("stop", ["a", "b", "c", "d", "e"], "stop"),
        ("n", 9, "n"),
        ("n", 0, "n"),
        ("stream", "yes", "stream"),
        ("tools", [{"type": "function"}], "tools[0].function"),
        ("response_format", {"type": "xml"}, "response_format.type"),
        ("routing", {"optimize": "speed"}, "routing.optimize"),
        ("reasoning_effort", "extreme", "reasoning_effort"),
    ],
)
def test_wrong_type_or_range_is_a_400_naming_the_param(http: httpx.Client, field: str, value: object, param: str) -> None:
    response = _post(http, {"model": "auto", "messages": MESSAGES, field: value})
    assert response.status_code == 400, response.text
    error = _error(response)
    assert error["param"] == param
    assert error["type"] == "invalid_request_error"


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"messages": MESSAGES}, "model"),
        ({"model": "auto"}, "messages"),
        ({"model": "auto", "messages": []}, "messages"),
        ({"model": "auto", "messages": [{"content": "hi"}]}, "messages[0].role"),
        ({"model": "auto", "messages": [{"role": "wizard", "content": "hi"}]}, "messages[0].role"),
        ({"model": "auto", "messages": [{"role": "user"}]}, "messages[0].content"),
        ({"model": "auto", "messages": [{"role": "tool", "content": "x"}]}, "messages[1].tool_call_id".replace("1", "0")),
    ],
)
def test_missing_or_malformed_messages_are_a_400(http: httpx.Client, body: dict, param: str) -> None:
    response = _post(http, body)
    assert response.status_code == 400
    assert _error(response)["param"] == param


def test_json_object_without_json_in_the_prompt_is_a_400(http: httpx.Client) -> None:
    response = _post(http, {"model": "auto", "messages": MESSAGES, "response_format": {"type": "json_object"}})
    assert response.status_code == 400
    error = _error(response)
    assert error["param"] == "messages"
    # As at OpenAI, and it says how to fix it: ask for JSON in a message, or send json_schema.
    assert "must contain the word 'json'" in error["message"]
    assert "Answer in JSON." in error["message"] and "'json_schema'" in error["message"]


def test_invalid_json_body_is_a_400(http: httpx.Client) -> None:
    response = http.post("/chat/completions", content=b"{not json", headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert _error(response)["code"] == "invalid_json"


def test_body_that_is_not_an_object_is_a_400(http: httpx.Client) -> None:
    assert _post(http, ["model", "auto"]).status_code == 400


def test_oversized_body_is_a_413(http: httpx.Client) -> None:
    # The live gateway is started with INFERBASE_MAX_BODY_BYTES=200000.
    response = _post(http, {"model": "auto", "messages": [{"role": "user", "content": "x" * 250_000}]})
    assert response.status_code == 413
    assert _error(response)["code"] == "body_too_large"


def test_missing_key_is_a_401(live: LiveGateway) -> None:
    response = httpx.post(f"{live.api}/chat/completions", json={"model": "auto", "messages": MESSAGES})
    assert response.status_code == 401
    assert _error(response)["type"] == "authentication_error"


def test_unknown_key_is_a_401(live: LiveGateway) -> None:
    response = httpx.post(f"{live.api}/chat/completions", json={"model": "auto", "messages": MESSAGES},
                          headers={"Authorization": "Bearer inf_not_a_real_key"})
    assert response.status_code == 401
    assert _error(response)["code"] == "invalid_api_key"


def test_revoked_key_is_a_401(live: LiveGateway) -> None:
    key = live.create_key(org="revoking-org")
    url = f"{live.api}/chat/completions"
    headers = {"Authorization": f"Bearer {key}"}
    assert httpx.post(url, json={"model": "auto", "messages": MESSAGES}, headers=headers).status_code == 200
    live.shell(
        "from inferbase.accounts.models import ApiKey; from inferbase.accounts.services import api_key_revoke;"
        f" api_key_revoke(api_key=ApiKey.objects.get(prefix='{key[:12]}'))"
    )
    from tests.live import poll

    response = poll(lambda: (r := httpx.post(url, json={"model": "auto", "messages": MESSAGES}, headers=headers)).status_code == 401 and r)
    assert "revoked" in _error(response)["message"]


def test_unknown_model_is_a_404(http: httpx.Client) -> None:
    response = _post(http, {"model": "gpt-17-ultra", "messages": MESSAGES})
    assert response.status_code == 404
    error = _error(response)
    assert error["code"] == "model_not_found" and error["param"] == "model"


def test_unknown_path_is_a_404_envelope(http: httpx.Client) -> None:
    response = http.get("/no/such/thing")
    assert response.status_code == 404
    assert _error(response)["type"] == "not_found_error"


def test_wrong_method_is_a_405(http: httpx.Client) -> None:
    response = http.get("/chat/completions")
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert _error(response)["code"] == "method_not_allowed"


def test_models_lists_auto_first_then_the_catalog(live: LiveGateway) -> None:
    body = httpx.get(f"{live.api}/models").json()
    assert body["object"] == "list"
    assert body["data"][0]["id"] == "auto"
    ids = [m["id"] for m in body["data"]]
    assert "meta-llama-3.3-70b" in ids and len(ids) >= 16


def test_model_health_is_ready_for_a_served_model(live: LiveGateway) -> None:
    assert httpx.get(f"{live.api}/models/meta-llama-3.3-70b/health").json() == {"model": "meta-llama-3.3-70b", "status": "ready"}


def test_model_health_of_an_unknown_model_is_a_404(live: LiveGateway) -> None:
    response = httpx.get(f"{live.api}/models/nope/health")
    assert response.status_code == 404
    assert _error(response)["code"] == "model_not_found"


def test_models_retrieve_returns_the_list_entry(live: LiveGateway, sdk) -> None:  # type: ignore[no-untyped-def]
    listed = {m["id"]: m for m in httpx.get(f"{live.api}/models").json()["data"]}
    model = sdk.models.retrieve("meta-llama-3.3-70b")
    assert model.id == "meta-llama-3.3-70b" and model.object == "model"
    assert {k: v for k, v in model.model_dump(exclude_none=True).items() if k != "evidence"} == listed[
        "meta-llama-3.3-70b"]
    assert set(model.model_extra["evidence"]) == {"routes", "benchmarks"}  # see tests/api/test_model_evidence.py
    # OpenAI's model object has created: the catalog's release month (2024-12), its first day in Unix seconds.
    assert model.created == int(datetime(2024, 12, 1, tzinfo=UTC).timestamp())
    assert all(isinstance(entry["created"], int) for entry in listed.values())
    assert sdk.models.retrieve("auto").created == 0  # no date applies to auto
    assert sdk.models.retrieve("auto").id == "auto"
    assert sdk.models.retrieve("inferbase/auto").id == "auto"


def test_models_retrieve_of_an_unknown_model_is_a_404(live: LiveGateway, sdk) -> None:  # type: ignore[no-untyped-def]
    import openai

    with pytest.raises(openai.NotFoundError) as raised:
        sdk.models.retrieve("nope")
    assert raised.value.status_code == 404
    assert raised.value.body["code"] == "model_not_found"  # type: ignore[index]
