"""Non-streamed chat completions end to end: daphne, the consumer, the simulated upstream over HTTP."""

from __future__ import annotations

import httpx

from tests.live import LiveGateway, decision_of, fail_the_first_pick, poll


def _ask(http: httpx.Client, **body: object) -> httpx.Response:
    payload = {"model": "auto", "messages": [{"role": "user", "content": "What is machine learning?"}], **body}
    return http.post("/chat/completions", json=payload)


def test_chat_completions_sdk_auto_answers_with_routing_cost_and_latency(sdk) -> None:  # type: ignore[no-untyped-def]
    response = sdk.chat.completions.create(
        model="auto", messages=[{"role": "user", "content": "What is machine learning?"}], max_tokens=256
    )
    assert response.id.startswith("req-")
    assert response.model not in ("auto", "inferbase/auto")
    assert "/" not in response.model  # a catalog id, never a provider's name
    assert response.choices[0].message.content.startswith(f"[simulated {response.model}]")
    assert response.choices[0].finish_reason == "stop"
    extra = response.model_extra
    assert extra["routing"]["model"] == response.model
    assert extra["routing"]["task"] == "factual"
    assert isinstance(extra["routing"]["routing_time_ms"], float)
    assert response.usage.model_extra["cost_micros"] > 0
    assert response.usage.model_extra["latency_ms"] >= 0


def test_chat_completions_pinned_model_serves_that_model_with_headers(http: httpx.Client) -> None:
    response = _ask(http, model="meta-llama-3.3-70b")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["model"] == "meta-llama-3.3-70b"
    assert response.headers["x-inferbase-model"] == "meta-llama-3.3-70b"
    assert int(response.headers["x-inferbase-cost-micros"]) == body["usage"]["cost_micros"]
    assert int(response.headers["x-inferbase-latency-ms"]) == body["usage"]["latency_ms"]
    assert body["routing"]["decisiveness_basis"] == "pinned"


def test_chat_completions_inferbase_auto_is_the_same_word(http: httpx.Client) -> None:
    response = _ask(http, model="inferbase/auto")
    assert response.status_code == 200
    assert response.json()["model"] != "inferbase/auto"


def test_chat_completions_is_deterministic_for_the_same_request(http: httpx.Client) -> None:
    first = _ask(http, model="openai-gpt-4.1-mini").json()
    second = _ask(http, model="openai-gpt-4.1-mini").json()
    assert first["choices"][0]["message"]["content"] == second["choices"][0]["message"]["content"]
    assert first["id"] != second["id"]


def test_chat_completions_cost_is_the_route_price_with_markup(http: httpx.Client) -> None:
    body = _ask(http, model="openai-gpt-4.1-mini").json()
    usage = body["usage"]
    # Simulated route of gpt-4.1-mini carries the cheapest real price: $0.40 in / $1.60 out per M tokens,
    # and the demo organization pays the default 5% managed markup.
    expected = round((usage["prompt_tokens"] * 0.40 + usage["completion_tokens"] * 1.60) * 1.05)
    assert usage["cost_micros"] == expected


def test_chat_completions_free_plan_is_charged_nothing(live: LiveGateway) -> None:
    key = live.create_key(org="free-org", plan="free")
    response = httpx.post(f"{live.api}/chat/completions", headers={"Authorization": f"Bearer {key}"},
                          json={"model": "openai-gpt-4.1-mini", "messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 200
    assert response.json()["usage"]["cost_micros"] == 0


def test_chat_completions_reports_params_not_forwarded(http: httpx.Client) -> None:
    body = _ask(http, model="openai-gpt-4.1-mini", metadata={"a": "b"}, store=True, temperature=0.2).json()
    assert body["usage"]["dropped_params"] == ["metadata", "store"]


def test_chat_completions_anthropic_route_reports_unsupported_params(http: httpx.Client) -> None:
    body = _ask(http, model="anthropic-claude-haiku-4.5", seed=7, max_tokens=300).json()
    assert body["model"] == "anthropic-claude-haiku-4.5"
    assert "seed" in body["usage"]["dropped_params"]


def test_chat_completions_falls_back_when_the_pick_fails(http: httpx.Client) -> None:
    def send(directive: str) -> dict:
        response = _ask(http, messages=[{"role": "user", "content": f"What is machine learning? {directive}"}])
        assert response.status_code == 200, response.text
        return response.json()

    failing, body, decision = fail_the_first_pick(http, send)
    assert body["model"] not in failing
    outcomes = [a["outcome"] for a in decision["attempts"]]
    assert outcomes[0] == "http_503" and outcomes[-1] == "served"


def test_chat_completions_all_routes_failing_is_a_502_envelope(http: httpx.Client) -> None:
    response = _ask(http, model="meta-llama-3.3-70b",
                    messages=[{"role": "user", "content": "hello [sim:fail=500]"}])
    assert response.status_code == 502
    error = response.json()["error"]
    assert error["type"] == "upstream_error"
    assert error["code"] == "upstream_error"
    assert "http_500" in error["message"]


def test_chat_completions_reasoning_only_answer_moves_to_the_next_model(http: httpx.Client) -> None:
    # A pool whose best model on quality thinks (the client asked): 20 tokens end it mid-reasoning.
    response = _ask(http, model="auto", max_tokens=20, extended_thinking=True,
                    messages=[{"role": "user", "content": "Prove that the square root of 2 is irrational."}],
                    routing={"model_pool": ["qwen3-32b", "openai-gpt-4.1-mini"], "optimize": "quality"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["choices"][0]["message"]["content"]  # an answer, not reasoning cut off by max_tokens
    decision = poll(lambda: decision_of(http, body["id"]))
    attempts = decision["attempts"]
    assert attempts[0]["outcome"] == "no_content_before_limit" and attempts[0]["model"] == body["routing"]["model"]
    assert attempts[-1] == {**attempts[-1], "outcome": "served", "model": body["model"]}
    assert body["model"] != body["routing"]["model"]  # the next model of the chain answered


def test_routing_decision_is_persisted_with_the_filter_trail(http: httpx.Client) -> None:
    body = _ask(http).json()
    decision = poll(lambda: decision_of(http, body["id"]))
    assert decision["request_id"] == body["id"]
    assert decision["final_disposition"] == "served"
    assert decision["classifier_task_family"] == "factual"
    steps = [s["step"] for s in decision["filter_trail"]]
    assert steps[0] == "pool_loaded" and steps[-1] == "chain"
    assert len(decision["filter_trail_text"]) == len(decision["filter_trail"])
    assert decision["chain_attempted"][0] in decision["route_displays"]
    # The models that passed eligibility (the chain step's `in`), not the pool before filtering.
    eligible = decision["filter_trail"][-1]["in"]
    assert decision["eligibility_pool_size"] == eligible < decision["filter_trail"][0]["out"]


def test_routing_decision_of_another_organization_is_a_404(live: LiveGateway, http: httpx.Client) -> None:
    body = _ask(http).json()
    poll(lambda: decision_of(http, body["id"]))
    other = live.create_key(org="other-org")
    response = httpx.get(f"{live.api}/routing-decisions/{body['id']}", headers={"Authorization": f"Bearer {other}"})
    missing = httpx.get(f"{live.api}/routing-decisions/req-doesnotexist", headers={"Authorization": f"Bearer {other}"})
    assert response.status_code == 404
    assert response.json() == {**missing.json(), "error": {**missing.json()["error"], "message": response.json()["error"]["message"]}}
    assert response.json()["error"]["code"] == "not_found"


def test_chat_completions_is_also_under_api_v1(live: LiveGateway) -> None:
    response = httpx.post(f"{live.base_url}/api/v1/chat/completions", headers={"Authorization": f"Bearer {live.api_key}"},
                          json={"model": "auto", "messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 200


def test_embedded_simulated_upstream_is_mounted_on_the_gateway(live: LiveGateway) -> None:
    # `make run` reaches the simulated upstream on itself, at /simulated.
    response = httpx.post(f"{live.base_url}/simulated/openai/v1/chat/completions",
                          json={"model": "meta-llama-3.3-70b", "messages": [{"role": "user", "content": "hi"}]})
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"].startswith("[simulated meta-llama-3.3-70b]")


def test_key_last_use_is_recorded_off_the_response_path(live: LiveGateway) -> None:
    key = live.create_key(org="last-use-org")
    check = f"from inferbase.accounts.models import ApiKey; print(ApiKey.objects.get(prefix='{key[:12]}').last_used_at)"
    assert live.shell(check).strip() == "None"
    httpx.post(f"{live.api}/chat/completions", headers={"Authorization": f"Bearer {key}"},
               json={"model": "auto", "messages": [{"role": "user", "content": "hi"}]})
    poll(lambda: live.shell(check).strip() != "None", timeout=20, interval=0.3)


def test_a_request_nothing_can_serve_keeps_its_trail(http: httpx.Client) -> None:
    # A 1-micro-dollar ceiling leaves no model: 503, and the decision keeps the trail to that step.
    response = _ask(http, routing={"max_cost_micros": 1}, max_tokens=1000)
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "no_eligible_model"
    request_id = response.headers["x-request-id"]
    decision = poll(lambda: decision_of(http, request_id))
    assert decision["final_disposition"] == "not_routed"
    assert decision["filter_trail"][-1]["step"] == "cost_ceiling"
    assert decision["filter_trail"][-1]["out"] == 0
    assert decision["chain_attempted"] == []
    assert decision["eligibility_pool_size"] == 0
