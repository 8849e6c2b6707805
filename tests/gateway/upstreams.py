"""Upstreams made with httpx.MockTransport for chain-walk tests (in-process, no sockets): each link of a chain is a
route on its own host, and the transport answers each host as the test says."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

from inferbase.accounts.selectors import KeyInfo
from inferbase.api.validation import chat_request_parse
from inferbase.gateway.answer import answer_stream
from inferbase.gateway.exchange import Exchange, Routed
from inferbase.gateway.state import AppState
from routing.decision import ChainLink, Decision
from tests.routing.conftest import make_model, make_policy, make_route

KEY = KeyInfo(key_id=1, project_id=1, organization_id=1, plan="pro", markup_bps=0, policy_id=None, active=True)
Behaviour = Callable[[httpx.Request], Any]


def link(host: str, *, reasoning: str = "none") -> ChainLink:
    """A link whose route is the only one on `host` (its model is named after the host)."""
    model = make_model(id=f"model-{host}", reasoning=reasoning)
    route = make_route(model_id=model.id, provider=host, base_url=f"https://{host}.example/v1")
    return ChainLink(route, model, api_key=None, own_key=False)


def completion(content: str | None = "hello", *, finish: str = "stop", reasoning: str | None = None) -> Behaviour:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning:
        message["reasoning_content"] = reasoning
    body = {"id": "up", "object": "chat.completion", "created": 1, "model": "up",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}}
    return lambda request: httpx.Response(200, json=body)


def sse(*deltas: dict[str, Any], finish: str | None = "stop", broken: bool = False) -> Behaviour:
    """A streamed answer: one chunk per delta, then the finish (or, `broken`, the connection lost instead)."""
    chunks = [{"choices": [{"index": 0, "delta": delta}]} for delta in deltas]
    if finish is not None:
        chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})

    async def body() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield b"data: " + json.dumps(chunk).encode() + b"\n\n"
        if broken:
            raise httpx.ReadError("connection lost")
        yield b"data: [DONE]\n\n"

    return lambda request: httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())


def chunk(**delta: Any) -> bytes:
    """One SSE frame of a streamed answer carrying `delta`."""
    return b"data: " + json.dumps({"choices": [{"index": 0, "delta": delta}]}).encode() + b"\n\n"


DONE = b"data: [DONE]\n\n"


def paced(*parts: bytes | float) -> Behaviour:
    """A streamed answer sent as written: frames (bytes), and pauses (seconds) between them."""

    async def body() -> AsyncIterator[bytes]:
        for part in parts:
            if isinstance(part, bytes):
                yield part
            else:
                await asyncio.sleep(part)

    return lambda request: httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())


def status(code: int) -> Behaviour:
    return lambda request: httpx.Response(code, json={"error": {"message": f"status {code}", "type": "x"}})


def refused(request: httpx.Request) -> Any:
    try:
        raise ConnectionRefusedError("refused")
    except ConnectionRefusedError as exc:
        raise httpx.ConnectError("cannot connect", request=request) from exc


def timed_out(request: httpx.Request) -> Any:
    raise httpx.ReadTimeout("no answer", request=request)


def slow(seconds: float, then: Behaviour) -> Behaviour:
    async def answer(request: httpx.Request) -> Any:
        await asyncio.sleep(seconds)
        return then(request)

    return answer


class Upstreams:
    """The MockTransport's answers, by host, and how often each host was called."""

    def __init__(self, **behaviours: Behaviour) -> None:
        self.behaviours = behaviours
        self.calls: Counter[str] = Counter()

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        host = request.url.host.split(".")[0]
        self.calls[host] += 1
        answer = self.behaviours[host](request)
        return await answer if asyncio.iscoroutine(answer) else answer


def exchange(*links: ChainLink, stream: bool = False, first_token_ms: int = 300, total_deadline_ms: int = 5_000,
             decision: Decision | None = None, **body: Any) -> Exchange:
    """A request routed to a chain of `links` (or to what `decision` decided), with these budgets."""
    chat = chat_request_parse({"model": "auto", "messages": [{"role": "user", "content": "hi"}], "stream": stream,
                               **body})
    if decision is None:
        decision = Decision(chain=links, policy=make_policy(), routing={"task": "chat"}, filter_trail=(),
                            filter_trail_text=(), eligibility_pool_size=len(links), thinking=None,
                            first_token_timeout_ms=first_token_ms, total_deadline_ms=total_deadline_ms)
    return Exchange(request_id="req-0123456789abcdef", key=KEY, chat=chat,
                    routed=Routed(decision, {"object": "routing", "task": "chat"}, 5, None))


def outcomes(ex: Exchange) -> list[str]:
    return [attempt.outcome for attempt in ex.attempts]


async def streamed(state: AppState, ex: Exchange) -> list[Any]:
    """Walk a streamed request; return its events ([DONE] as the string)."""
    sent: list[bytes] = []
    await answer_stream(state, ex, sent.append)
    events = []
    for frame in b"".join(sent).split(b"\n\n"):
        if frame.startswith(b"data: "):
            data = frame[6:]
            events.append(data.decode() if data == b"[DONE]" else json.loads(data))
    return events
