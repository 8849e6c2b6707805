"""What a stream is recorded as: a stream read to its end is served (200) in the decision and the log;
only a client that goes away before the end is client_disconnected (499), and its upstream call is
cancelled."""

from __future__ import annotations

import json

import httpx

from tests.live import LiveGateway, decision_of, poll

HAIKU = [{"role": "user", "content": "Write a haiku about routers"}]


def _log_rows(live: LiveGateway, request_ids: list[str]) -> dict[str, dict]:
    """Return the persisted request-log rows of these requests, polled until all of them exist."""
    code = ("import json; from observability.models import RequestLog; "
            f"rows = RequestLog.objects.filter(request_id__in={request_ids!r}); "
            "print(json.dumps({r.request_id: {'final_disposition': r.final_disposition, 'status_code': r.status_code, "
            "'client_disconnected': r.client_disconnected} for r in rows}))")

    def rows() -> dict[str, dict] | None:
        found = json.loads(live.shell(code) or "{}")
        return found if len(found) == len(request_ids) else None

    return poll(rows, timeout=30, interval=0.3)


def _sdk_stream_to_the_end(sdk) -> str:  # type: ignore[no-untyped-def]
    request_id = ""
    for chunk in sdk.chat.completions.create(model="meta-llama-3.3-70b", stream=True, messages=HAIKU):
        request_id = chunk.id
    return request_id


def _raw_stream_to_the_end(http: httpx.Client) -> str:
    request_id = ""
    with http.stream("POST", "/chat/completions",
                     json={"model": "meta-llama-3.3-70b", "stream": True, "messages": HAIKU}) as response:
        body = response.read().decode()
    assert body.endswith("data: [DONE]\n\n")
    for line in body.splitlines():
        if line.startswith("data: {"):
            request_id = json.loads(line[6:])["id"]
    return request_id


def _close_after_the_first_chunk(http: httpx.Client, tag: str) -> str:
    payload = {"model": "meta-llama-3.3-70b", "stream": True,
               "messages": [{"role": "user", "content": f"Tell me a story [sim:tag={tag}] [sim:idle_ms=5000] [sim:tokens=80]"}]}
    with http.stream("POST", "/chat/completions", json=payload) as response:
        for line in response.iter_lines():
            if line.startswith("data: ") and '"chat.completion.chunk"' in line:
                return json.loads(line[6:])["id"]
    raise AssertionError("the stream sent no chunk")


def test_streams_read_to_the_end_are_served_and_a_client_leaving_early_is_not(
        live: LiveGateway, http: httpx.Client, sdk, simulated_url: str) -> None:  # type: ignore[no-untyped-def]
    by_sdk = _sdk_stream_to_the_end(sdk)
    raw = _raw_stream_to_the_end(http)
    tag = "outcome-early-close"
    early = _close_after_the_first_chunk(http, tag)

    for request_id in (by_sdk, raw):
        decision = poll(lambda rid=request_id: decision_of(http, rid))
        assert decision["final_disposition"] == "served", request_id
    decision = poll(lambda: decision_of(http, early))
    assert decision["final_disposition"] == "client_disconnected"

    rows = _log_rows(live, [by_sdk, raw, early])
    for request_id in (by_sdk, raw):
        assert rows[request_id] == {"final_disposition": "served", "status_code": 200, "client_disconnected": False}
    assert rows[early] == {"final_disposition": "client_disconnected", "status_code": 499, "client_disconnected": True}
    # The early leaver's upstream call was cancelled, not left to run.
    stats = poll(lambda: (s := httpx.get(f"{simulated_url}/stats").json()["by_tag"].get(tag)) and s["cancelled"] and s)
    assert stats["cancelled"] == 1 and stats["completed"] == 0
