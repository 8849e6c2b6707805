"""Scheduled provider health probes: one GET of the model list per provider, stored, read by the health
endpoint and the servable step; a caller of the endpoint no longer makes the gateway call providers."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from django.core.cache import cache

from providers.health import ProbeResult, ProbeTarget, probe_all
from providers.models import Provider, ProviderHealth
from providers.services import probe_targets, provider_health_record
from routing.snapshot import VERSION_KEY
from tests.live import LiveGateway, free_port, poll
from tests.routing.conftest import chain_ids, decide_with, make_model, make_route, make_snapshot, step_text


class _Counting(BaseHTTPRequestHandler):
    paths: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        type(self).paths.append(self.path)
        body = b'{"object": "list", "data": []}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def counting_server() -> Iterator[tuple[str, list[str]]]:
    handler = type("Counting", (_Counting,), {"paths": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", handler.paths
    finally:
        server.shutdown()
        server.server_close()


def test_a_probe_is_one_get_of_the_model_list(counting_server: tuple[str, list[str]]) -> None:
    base, paths = counting_server
    dead = f"http://127.0.0.1:{free_port()}/v1"
    results = asyncio.run(probe_all([ProbeTarget("up", base, "openai", "sk"), ProbeTarget("down", dead, "openai", None)],
                                    2.0))
    assert paths == ["/v1/models"]
    assert results[0] == ProbeResult("up", True, 200, "")
    assert results[1].provider == "down" and not results[1].ok and results[1].http_status is None


@pytest.mark.django_db(transaction=True)
def test_only_providers_that_can_serve_are_probed(monkeypatch: pytest.MonkeyPatch) -> None:
    Provider.objects.create(slug="sim", name="Sim", kind="simulated", dialect="openai")
    Provider.objects.create(slug="keyed", name="K", kind="openai-compatible", base_url="https://k.example/v1",
                            api_key_env="KEYED_API_KEY")
    Provider.objects.create(slug="keyless", name="L", kind="openai-compatible", base_url="https://l.example/v1",
                            api_key_env="MISSING_API_KEY")
    Provider.objects.create(slug="own", name="O", kind="openai-compatible", base_url="http://127.0.0.1:9/v1")
    monkeypatch.setenv("KEYED_API_KEY", "sk-k")
    monkeypatch.delenv("MISSING_API_KEY", raising=False)
    targets = {t.provider: t for t in probe_targets()}
    assert set(targets) == {"sim", "keyed", "own"}
    assert targets["keyed"].api_key == "sk-k" and targets["sim"].base_url.endswith("/simulated/openai/v1")


@pytest.mark.django_db(transaction=True)
def test_a_change_of_status_is_saved_and_bumps_the_snapshot_a_repeat_does_not() -> None:
    Provider.objects.create(slug="p", name="P", kind="openai-compatible", base_url="https://p.example/v1")
    assert provider_health_record([ProbeResult("p", False, 503, "HTTP 503")]) == ["p"]
    assert ProviderHealth.objects.get().status == "loading"
    version = cache.get(VERSION_KEY)
    assert provider_health_record([ProbeResult("p", False, 503, "HTTP 503")]) == []
    assert cache.get(VERSION_KEY) == version  # only checked_at moved
    assert provider_health_record([ProbeResult("p", True, 200, "")]) == ["p"]
    assert ProviderHealth.objects.get().status == "ready" and cache.get(VERSION_KEY) != version


def test_a_provider_down_at_its_last_probe_is_not_servable_and_the_step_says_why() -> None:
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    snapshot = make_snapshot(models, [make_route(model_id="a", provider_down=True), make_route(model_id="b")])
    decision = decide_with(snapshot)
    assert chain_ids(decision) == ["groq/b"]
    assert step_text(decision, "servable") == (
        "1 of 2 models has a servable route; the others lack a provider whose API answered its latest "
        "health probe.")


def test_the_health_endpoint_answers_from_the_latest_probe_not_a_call_per_request(
        live: LiveGateway, counting_server: tuple[str, list[str]]) -> None:
    base, paths = counting_server
    live.manage("add_provider", "--name", "probe-counter", "--base-url", base, "--model", "probe-counter-model")
    try:
        url = f"{live.api}/models/probe-counter-model/health"
        # The gateway serves the snapshot it holds while it reloads: poll until it knows the new model
        # (an unknown model is a 404 and probes nothing).
        first = poll(lambda: (r := httpx.get(url, timeout=10)).status_code != 404 and r)
        assert first.json() == {"model": "probe-counter-model", "status": "ready"}
        for _ in range(4):
            assert httpx.get(url, timeout=10).json() == {"model": "probe-counter-model", "status": "ready"}
        assert paths == ["/v1/models"]  # one probe (there was none yet); the other four read it
    finally:
        live.remove_provider("probe-counter")
