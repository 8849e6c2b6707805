"""A user's own OpenAI-compatible endpoint, added without code: `manage.py add_provider`."""

from __future__ import annotations

import httpx

from tests.live import LiveGateway, poll


def test_add_provider_serves_the_users_endpoint(live: LiveGateway, simulated_url: str, http: httpx.Client) -> None:
    # The simulated upstream stands in for a vLLM or Ollama server: an OpenAI-compatible base URL.
    live.manage("add_provider", "--name", "my-vllm", "--base-url", f"{simulated_url}/openai/v1",
                "--model", "my-llama=meta-llama-3.3-70b", "--context-window", "65536")

    def served() -> httpx.Response | None:
        response = http.post("/chat/completions", json={"model": "my-llama", "messages": [{"role": "user", "content": "hi"}]})
        return response if response.status_code == 200 else None

    response = poll(served)
    body = response.json()
    assert body["model"] == "my-llama"
    # The upstream answered for its own model name, the one given after "=".
    assert body["choices"][0]["message"]["content"].startswith("[simulated meta-llama-3.3-70b]")
    assert "my-llama" in [m["id"] for m in httpx.get(f"{live.api}/models").json()["data"]]
