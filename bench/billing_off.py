"""What budgets, rate limits and guardrails add per request when none is configured (the common case): the
request path's share, timed in isolation, next to a policy with checks and a key with limits for scale.

    .venv/bin/python -m bench.billing_off
"""

from __future__ import annotations

import asyncio
import os
import sys
import timeit
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def per_call_us(stmt, number: int = 100_000, repeat: int = 5) -> float:  # type: ignore[no-untyped-def]
    return min(timeit.repeat(stmt, number=number, repeat=repeat)) / number * 1e6


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "inferbase.settings")
    import django

    django.setup()
    from billing.guardrails import NO_GUARDRAILS, guardrail_config_parse, guardrails_compile
    from billing.limits import NO_LIMITS, MemoryCounterStore
    from billing.limits.limiter import Limiter
    from inferbase.accounts.selectors import KeyInfo
    from inferbase.gateway.exchange import Exchange
    from inferbase.gateway.guard import input_check
    from inferbase.gateway.request import ChatRequest
    from routing.decision import RoutingOverrides

    key = KeyInfo(key_id=1, project_id=1, organization_id=1, plan="pro", markup_bps=500, policy_id=None, active=True)
    prompt = "Summarise the attached meeting notes for the team, in five bullet points. " * 20
    chat = ChatRequest(model="auto", messages=({"role": "user", "content": prompt},), stream=False,
                       include_usage=False, max_tokens=256, extended_thinking=None, routing=RoutingOverrides(),
                       response_format_type=None, json_schema=None, has_tools=False, has_images=False,
                       tool_loop=False, has_history=False, forward={}, dropped_params=())
    by_policy: dict[int | None, object] = {}
    limiter = Limiter(MemoryCounterStore(), prefix="bench", fail_open=False)

    def off() -> None:
        # Everything the request path adds with no limits and no checks: the policy's checks (a dict miss), the
        # key's limits (three dict misses), the input-check early return, the output test, the record's list.
        ex = Exchange(request_id="req-bench", key=key, chat=chat)
        ex.guardrails = by_policy.get(7, NO_GUARDRAILS)  # type: ignore[assignment]
        NO_LIMITS.for_key(organization_id=1, project_id=1, key_id=1)
        input_check(ex)
        bool(ex.guardrails.output)
        [r.as_dict() for r in ex.guardrail_results]

    def exchange_only() -> None:
        Exchange(request_id="req-bench", key=key, chat=chat)

    pii = guardrails_compile(guardrail_config_parse(
        {"input": [{"check": "pii", "action": "redact", "price_micros": 50}]}))

    def with_pii() -> None:
        ex = Exchange(request_id="req-bench", key=key, chat=chat)
        ex.guardrails = pii
        input_check(ex)

    from billing.limits import Admission, Scope, ScopeLimits
    limits = (ScopeLimits(Scope.ORGANIZATION, 1, monthly_budget_micros=10**15, requests_per_minute=10**9),)

    async def admit_settle(n: int) -> None:
        for _ in range(n):
            verdict = await limiter.admit(Admission(limits, tokens=300, cost_micros=100, now=1.8e9))
            await limiter.settle(verdict.reservation, tokens=200, cost_micros=50)

    loop = asyncio.new_event_loop()
    n = 20_000
    limited = min(timeit.repeat(lambda: loop.run_until_complete(admit_settle(n)), number=1, repeat=5)) / n * 1e6
    rows = [
        ("off: Exchange with the billing fields", per_call_us(exchange_only)),
        ("off: all the added steps (Exchange included)", per_call_us(off)),
        ("on: PII redact over a ~500-token prompt (input_check)", per_call_us(with_pii, number=2_000)),
        ("on: a limited key's admit + settle, in-memory counters", limited),
    ]
    for name, us in rows:
        print(f"| {name} | {us:.2f} µs |")


if __name__ == "__main__":
    main()
