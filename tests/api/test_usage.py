"""GET /usage: the caller's organization only, exact totals, 400s for bad ranges; and over the live gateway,
totals equal the sum of the cost_micros the client was told."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from django.contrib.auth.models import User
from django.test import Client

from billing.services import usage_rollup_add
from inferbase.accounts.models import Membership
from inferbase.accounts.services import api_key_create
from tests.live import LiveGateway, fail_the_first_pick, poll, start_live_gateway, stop_live_gateway


def _log(request_id: str, org: int, cost: int, day: str = "2026-11-30") -> dict:
    return {"request_id": request_id, "organization_id": org, "project_id": 1, "api_key_id": 1,
            "created_at": datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC).timestamp(),
            "model_served": "m", "prompt_tokens": 3, "completion_tokens": 2, "cost_micros": cost}


@pytest.fixture
def caller(db) -> tuple[Client, int]:  # type: ignore[no-untyped-def]
    created = api_key_create(org_slug="acme", project_name="default")
    client = Client(headers={"Authorization": f"Bearer {created.raw_key}"})
    return client, created.api_key.project.organization_id


def test_usage_counts_only_the_callers_organization(caller: tuple[Client, int]) -> None:
    client, org = caller
    usage_rollup_add([_log("a", org, 5), _log("b", org, 6, day="2026-11-29"), _log("c", org + 1000, 1_000)])
    response = client.get("/api/v1/inference/usage?from=2026-11-01&to=2026-11-30")
    assert response.status_code == 200
    assert response.json() == {
        "object": "usage", "from": "2026-11-01", "to": "2026-11-30",
        "totals": {"requests": 2, "prompt_tokens": 6, "completion_tokens": 4, "reasoning_tokens": 0, "cost_micros": 11},
        "data": [{"day": "2026-11-29", "requests": 1, "prompt_tokens": 3, "completion_tokens": 2, "reasoning_tokens": 0,
                  "cost_micros": 6},
                 {"day": "2026-11-30", "requests": 1, "prompt_tokens": 3, "completion_tokens": 2, "reasoning_tokens": 0,
                  "cost_micros": 5}],
    }
    by_model = client.get("/api/v1/usage?from=2026-11-30&to=2026-11-30&group_by=model").json()
    assert by_model["data"] == [{"model": "m", "requests": 1, "prompt_tokens": 3, "completion_tokens": 2,
                                 "reasoning_tokens": 0, "cost_micros": 5}]


@pytest.mark.parametrize(("query", "param"), [
    ("to=2026-11-30", "from"),
    ("from=2026-11-01", "to"),
    ("from=2026-13-01&to=2026-12-02", "from"),
    ("from=2026-11-1&to=2026-11-30", "from"),
    ("from=2026-11-30&to=2026-11-01", "to"),
    ("from=2024-01-01&to=2026-11-30", "to"),
    ("from=2026-11-01&to=2026-11-30&group_by=week", "group_by"),
])
def test_a_bad_range_is_a_400_envelope(caller: tuple[Client, int], query: str, param: str) -> None:
    client, _ = caller
    response = client.get(f"/api/v1/inference/usage?{query}")
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["type"], error["param"]) == ("invalid_request_error", param)
    assert error["message"]


def test_usage_needs_a_key_or_a_session(db) -> None:  # type: ignore[no-untyped-def]
    response = Client().get("/api/v1/inference/usage?from=2026-11-01&to=2026-11-30")
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "authentication_error"


def test_a_portal_session_reads_its_organization_and_not_another(db) -> None:  # type: ignore[no-untyped-def]
    mine = api_key_create(org_slug="mine", project_name="default").api_key.project.organization
    theirs = api_key_create(org_slug="theirs", project_name="default").api_key.project.organization
    user = User.objects.create_user("ada", password="pw")
    Membership.objects.create(user=user, organization=mine, role="analyst")
    usage_rollup_add([_log("a", mine.pk, 5), _log("b", theirs.pk, 9)])
    client = Client()
    client.force_login(user)
    assert client.get("/api/v1/inference/usage?from=2026-11-30&to=2026-11-30").json()["totals"]["cost_micros"] == 5
    other = client.get(f"/api/v1/inference/usage?from=2026-11-30&to=2026-11-30&organization={theirs.pk}")
    assert other.status_code == 404


def _cost_of_stream(http: httpx.Client, body: dict) -> int:
    import orjson

    cost = None
    with http.stream("POST", "/chat/completions", json={**body, "stream": True,
                                                        "stream_options": {"include_usage": True}}) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("data: {"):
                event = orjson.loads(line[6:])
                if event.get("object") == "usage":
                    cost = event["cost_micros"]
    assert cost is not None
    return cost


def test_usage_totals_equal_the_cost_every_response_reported(live: LiveGateway) -> None:
    key = live.create_key(org=f"usage-{uuid.uuid4().hex[:8]}")
    costs: list[int] = []
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=live.api, headers=headers, timeout=30) as http:
        for prompt in ("What is machine learning?", "Write a haiku about routers", "Explain TCP in one line"):
            response = http.post("/chat/completions", json={"model": "auto", "max_tokens": 64,
                                                             "messages": [{"role": "user", "content": prompt}]})
            assert response.status_code == 200
            assert int(response.headers["x-inferbase-cost-micros"]) == response.json()["usage"]["cost_micros"]
            costs.append(response.json()["usage"]["cost_micros"])
        # A route that fails first: the fallback serves; the request is one request at its one cost.
        def send(directive: str) -> dict:
            response = http.post("/chat/completions", json={"model": "auto", "max_tokens": 32, "messages": [
                {"role": "user", "content": f"Name a prime number {directive}"}]})
            assert response.status_code == 200
            costs.append(response.json()["usage"]["cost_micros"])
            return response.json()

        failing, served, _ = fail_the_first_pick(http, send)
        assert served["model"] not in failing
        costs.append(_cost_of_stream(http, {"model": "auto", "max_tokens": 64,
                                            "messages": [{"role": "user", "content": "Tell me a story"}]}))
        failed = http.post("/chat/completions", json={"model": "auto", "messages": [
            {"role": "user", "content": "hello [sim:fail=500]"}]})
        assert failed.status_code >= 500
        requests = len(costs) + 1  # and the failed request, which cost nothing
        assert sum(costs) > 0
        today = datetime.now(UTC).date()
        query = f"/usage?from={(today - timedelta(days=1)).isoformat()}&to={(today + timedelta(days=1)).isoformat()}"
        usage = poll(lambda: (u := http.get(query).json())["totals"]["requests"] == requests and u, timeout=20)
        assert usage["totals"]["cost_micros"] == sum(costs)
        by_model = http.get(query + "&group_by=model").json()
        assert sum(row["cost_micros"] for row in by_model["data"]) == usage["totals"]["cost_micros"]


def _logged(live: LiveGateway, request_id: str) -> dict | None:
    """Return the request's log record (cost_micros and its breakdown) once the writer has stored it."""
    import json

    out = live.shell("import json; from observability.models import RequestLog; "
                     f"r = RequestLog.objects.filter(request_id={request_id!r}).values('cost_micros', 'cost_breakdown').first(); "
                     "print(json.dumps(r))")
    return json.loads(out)


def test_a_reask_and_a_failed_billed_attempt_are_in_the_breakdown_and_the_one_figure(live: LiveGateway) -> None:
    import orjson

    org = f"breakdown-{uuid.uuid4().hex[:8]}"
    key = live.create_key(org=org, policy=f"{org}-reask", structured_output_reask=True)
    with httpx.Client(base_url=live.api, headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
        reask_body = {"model": "openai-gpt-4.1-mini", "response_format": {"type": "json_object"},
                      "messages": [{"role": "user", "content": "Describe a cat in JSON. [sim:json=none]"}]}
        told: list[int] = []  # every cost_micros a response reported, for Usage's totals

        def reasked() -> httpx.Response | None:
            # The policy edit reaches the gateway with its next snapshot (served stale while it reloads).
            response = http.post("/chat/completions", json=reask_body)
            told.append(response.json()["usage"]["cost_micros"])
            return response if response.json()["usage"].get("structured_output_repair", {}).get("reasked") else None

        reask = poll(reasked, timeout=20)
        # qwen3-32b thinks through its 100 tokens and is cut off before content (billed); the next link serves.
        cut = http.post("/chat/completions", json={
            "model": "auto", "max_tokens": 100, "extended_thinking": True,
            "messages": [{"role": "user", "content": "Prove that there are infinitely many primes, step by step."}],
            "routing": {"model_pool": ["qwen3-32b", "openai-gpt-4.1-mini"], "optimize": "quality"}})
        assert cut.status_code == 200 and cut.json()["model"] == "openai-gpt-4.1-mini"
        usage_event = chunk_usage = None
        with http.stream("POST", "/chat/completions", json={
                "model": "auto", "max_tokens": 64, "stream": True, "stream_options": {"include_usage": True},
                "messages": [{"role": "user", "content": "Tell me a story"}]}) as stream:
            streamed_id = stream.headers["x-request-id"]
            for line in stream.iter_lines():
                if line.startswith("data: {"):
                    event = orjson.loads(line[6:])
                    if event.get("object") == "usage":
                        usage_event = event["cost_micros"]
                    elif event.get("usage"):
                        chunk_usage = event["usage"]["cost_micros"]
        assert usage_event is not None and usage_event == chunk_usage

        costs = {}
        for response, reasons in ((reask, ["reask", "served"]), (cut, ["failed_billed", "served"])):
            body = response.json()
            assert int(response.headers["x-inferbase-cost-micros"]) == body["usage"]["cost_micros"]
            logged = poll(lambda rid=body["id"]: _logged(live, rid), timeout=20)
            breakdown = logged["cost_breakdown"]
            assert [a["reason"] for a in breakdown["attempts"]] == reasons
            assert all(a["provider_picos"] > 0 for a in breakdown["attempts"])
            assert logged["cost_micros"] == breakdown["cost_micros"] == body["usage"]["cost_micros"] > 0
            # Rounded once over both calls: the charge is the marked-up sum of their exact price lines.
            assert breakdown["provider_micros"] + breakdown["markup_micros"] == breakdown["cost_micros"]
            costs[body["id"]] = body["usage"]["cost_micros"]
        streamed = poll(lambda: _logged(live, streamed_id), timeout=20)
        assert streamed["cost_micros"] == usage_event
        costs[streamed_id] = usage_event

        today = datetime.now(UTC).date()
        query = f"/usage?from={(today - timedelta(days=1)).isoformat()}&to={(today + timedelta(days=1)).isoformat()}"
        told += [cut.json()["usage"]["cost_micros"], usage_event]
        usage = poll(lambda: (u := http.get(query).json())["totals"]["requests"] == len(told) and u, timeout=20)
        assert usage["totals"]["cost_micros"] == sum(told)


LINGER_S = 12  # the lingering gateway's writer commits this long after a request


@pytest.fixture(scope="module")
def lingering(tmp_path_factory: pytest.TempPathFactory, simulated_url: str) -> Iterator[LiveGateway]:
    """A gateway whose log writer lingers before it commits: Usage read right after a response comes from the
    pending set, the rollups have nothing yet."""
    gateway = start_live_gateway(Path(tmp_path_factory.mktemp("lingering")), INFERBASE_SIMULATED_URL=simulated_url,
                                 INFERBASE_RECORD_LINGER_SECONDS=str(LINGER_S))
    yield gateway
    stop_live_gateway(gateway)


def _today_query(group_by: str = "day") -> str:
    today = datetime.now(UTC).date()
    return (f"/usage?from={(today - timedelta(days=1)).isoformat()}&to={(today + timedelta(days=1)).isoformat()}"
            f"&group_by={group_by}")


def test_usage_reflects_a_request_as_soon_as_the_client_has_the_response(lingering: LiveGateway) -> None:
    key = lingering.create_key(org=f"pending-{uuid.uuid4().hex[:8]}")
    other = lingering.create_key(org=f"pending-other-{uuid.uuid4().hex[:8]}")
    body = {"model": "auto", "max_tokens": 64, "messages": [{"role": "user", "content": "What is machine learning?"}]}
    with (httpx.Client(base_url=lingering.api, headers={"Authorization": f"Bearer {key}"}, timeout=30) as http,
          httpx.Client(base_url=lingering.api, headers={"Authorization": f"Bearer {other}"}, timeout=30) as theirs):
        assert http.get(_today_query()).json()["totals"]["requests"] == 0
        started = time.monotonic()
        whole = http.post("/chat/completions", json=body)
        assert whole.status_code == 200
        cost = whole.json()["usage"]["cost_micros"]
        assert cost > 0
        usage = http.get(_today_query()).json()  # at once: no poll
        assert (usage["totals"]["requests"], usage["totals"]["cost_micros"]) == (1, cost)
        assert usage["totals"]["prompt_tokens"] == whole.json()["usage"]["prompt_tokens"]

        streamed = _cost_of_stream(http, body)  # read to its end, as a client has it
        costs = [cost, streamed]
        usage = http.get(_today_query()).json()
        assert (usage["totals"]["requests"], usage["totals"]["cost_micros"]) == (2, sum(costs))

        failed = http.post("/chat/completions", json={"model": "auto", "messages": [
            {"role": "user", "content": "hello [sim:fail=500]"}]})
        assert failed.status_code >= 500  # a request too (it cost nothing)
        usage = http.get(_today_query()).json()
        assert (usage["totals"]["requests"], usage["totals"]["cost_micros"]) == (3, sum(costs))
        by_model = http.get(_today_query("model")).json()
        assert by_model["totals"] == usage["totals"]
        assert sum(row["cost_micros"] for row in by_model["data"]) == sum(costs)
        assert theirs.get(_today_query()).json()["totals"]["requests"] == 0  # another organization's: not counted
        # All of that came from the pending set: the writer had committed none of them yet.
        assert _logged(lingering, whole.json()["id"]) is None
        assert time.monotonic() - started < LINGER_S, "the machine was too slow to show the gap; raise LINGER_S"

        # The writer commits: each request counts once, from the rollups now (and the pending entries are gone).
        poll(lambda: _logged(lingering, whole.json()["id"]), timeout=LINGER_S + 30)
        after = poll(lambda: (u := http.get(_today_query()).json())["totals"]["requests"] == 3 and u, timeout=5)
        assert after["totals"] == usage["totals"]
        assert http.get(_today_query("model")).json()["totals"] == usage["totals"]
        if lingering.env.get("REDIS_URL"):  # the writer deleted the entries it committed
            import redis

            client = redis.Redis.from_url(lingering.env["REDIS_URL"])
            pattern = f"{lingering.env['INFERBASE_CACHE_PREFIX']}:usage-pending:*"
            poll(lambda: not any(client.hlen(k) for k in client.scan_iter(pattern)), timeout=10)
            client.close()
