"""A user's own OpenAI-compatible endpoint, added without code: `manage.py add_provider`."""

from __future__ import annotations

import httpx
import orjson

from tests.live import LiveGateway, decision_of, free_port, poll


def test_add_provider_serves_the_users_endpoint(live: LiveGateway, simulated_url: str, http: httpx.Client) -> None:
    # The simulated upstream stands in for a vLLM or Ollama server: an OpenAI-compatible base URL.
    live.manage("add_provider", "--name", "my-vllm", "--base-url", f"{simulated_url}/openai/v1",
                "--model", "my-llama=meta-llama-3.3-70b", "--context-window", "65536")

    def served() -> httpx.Response | None:
        response = http.post("/chat/completions", json={"model": "my-llama", "messages": [{"role": "user", "content": "hi"}]})
        return response if response.status_code == 200 else None

    try:
        response = poll(served)
        body = response.json()
        assert body["model"] == "my-llama"
        # The upstream answered for its own model name, the one given after "=".
        assert body["choices"][0]["message"]["content"].startswith("[simulated meta-llama-3.3-70b]")
        assert "my-llama" in [m["id"] for m in httpx.get(f"{live.api}/models").json()["data"]]
    finally:
        # A free model left in the shared gateway's catalog would change other tests' decisions.
        live.remove_provider("my-vllm")


def _sse_events(response: httpx.Response) -> list[dict]:
    return [orjson.loads(line[6:]) for line in response.text.splitlines()
            if line.startswith("data: ") and line != "data: [DONE]"]


def test_an_endpoint_that_refuses_connections_is_a_502_naming_the_cause(live: LiveGateway,
                                                                       http: httpx.Client) -> None:
    live.manage("add_provider", "--name", "my-down-server", "--base-url", f"http://127.0.0.1:{free_port()}/v1",
                "--model", "my-down-model")
    try:
        _refused_connection_is_reported(http)
    finally:
        live.remove_provider("my-down-server")


def _refused_connection_is_reported(http: httpx.Client) -> None:
    body = {"model": "my-down-model", "messages": [{"role": "user", "content": "hi"}]}
    response = poll(lambda: (r := http.post("/chat/completions", json=body)).status_code != 404 and r)
    assert response.status_code == 502, response.text
    error = response.json()["error"]
    assert (error["type"], error["code"]) == ("upstream_error", "upstream_unreachable")
    assert "connection refused" in error["message"] and "timed out" not in error["message"]
    request_id = response.headers["x-request-id"]
    decision = poll(lambda: decision_of(http, request_id))
    assert decision["final_disposition"] == "upstream_unreachable"
    assert [a["outcome"] for a in decision["attempts"]] == ["connection_refused"]
    assert "connection refused" in decision["attempts"][0]["error"]

    # A stream whose chain fails before any byte was sent is answered like a whole request.
    streamed = http.post("/chat/completions", json={**body, "stream": True})
    assert streamed.status_code == 502, streamed.text
    failure = streamed.json()["error"]
    assert failure["code"] == "upstream_unreachable"
    assert "connection refused" in failure["message"]
    assert "my-down-server/my-down-model: connection_refused" in failure["message"]
