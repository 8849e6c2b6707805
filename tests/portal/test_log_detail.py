"""/portal/logs/<request_id>/: the routing decision rendered with model names."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from inferbase.accounts.models import Organization

from .conftest import make_api_key, make_project, make_request_log, make_routing_decision

pytestmark = pytest.mark.django_db


@pytest.fixture
def key(acme: Organization, models: None):  # type: ignore[no-untyped-def]
    return make_api_key(make_project(acme, name="web"), name="frontend")


def _text(response) -> str:  # type: ignore[no-untyped-def]
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode())))


def test_detail_shows_the_trail_one_sentence_per_line_with_its_numbers(analyst: Client, key) -> None:  # type: ignore[no-untyped-def]
    log = make_request_log(key)
    make_routing_decision(log)
    response = analyst.get(f"/portal/logs/{log.request_id}/")
    assert response.status_code == 200
    items = re.findall(r"<li><span class=\"sentence\">(.*?)</span><span class=\"numbers\">(.*?)</span></li>",
                       response.content.decode())
    assert [(sentence, re.sub(r"<[^>]+>", "", numbers)) for sentence, numbers in items] == [
        ("3 models in the pool.", "pool_loaded 3 of 3"),
        ("2 of 3 models meet the standard quality floor for this task.", "preset_eligibility 2 of 3 · preset: standard"),
        ("2 models in the final chain: the pick, then its fallbacks.", "chain 2 of 2"),
    ]


def test_detail_renders_the_pick_with_model_names_and_its_standing(analyst: Client, key) -> None:  # type: ignore[no-untyped-def]
    log = make_request_log(key)
    make_routing_decision(log)
    text = _text(analyst.get(f"/portal/logs/{log.request_id}/"))
    # The reasoning names models by name, the alternatives too.
    assert "(100 micro-dollars vs 125 micro-dollars for Beta 70B)" in text
    assert "1 Alpha 7B pick 0.61 $0.000100 900 ms" in text
    assert "2 Beta 70B 0.74 $0.000125 1400 ms" in text
    assert "Decisiveness 0.25 · lead : the margin was measured against the runner-up" in text


def test_detail_shows_chain_attempts_policy_and_what_was_asked(analyst: Client, key) -> None:  # type: ignore[no-untyped-def]
    attempts = [{"route": "simulated/beta-70b", "model": "beta-70b", "outcome": "timeout", "ms": 15000},
                {"route": "simulated/alpha-7b", "model": "alpha-7b", "outcome": "served", "ms": 240, "status": 200}]
    log = make_request_log(key, attempts=attempts, requested={
        "routing": {"optimize": "cost", "model_pool": ["beta-70b", "alpha-7b"], "quality_floor": "none"},
        "extended_thinking": False, "max_tokens": 256})
    make_routing_decision(log, chain_attempted=["simulated/beta-70b", "simulated/alpha-7b"], attempts=attempts)
    text = _text(analyst.get(f"/portal/logs/{log.request_id}/"))
    assert "Beta 70B simulated/beta-70b timeout Alpha 7B simulated/alpha-7b served" in text
    assert "1 Beta 70B simulated/beta-70b timeout — 15000" in text
    assert "2 Alpha 7B simulated/alpha-7b served 200 240" in text
    assert "Strict (key) objective: cost" in text
    assert "Ignored (would have widened the policy) routing.quality_floor: none is looser than the policy's standard" in text
    # The routing object as sent, its pool by model name (the id beside it), never a list of raw ids.
    assert "optimize cost model_pool Beta 70B (beta-70b), Alpha 7B (alpha-7b) quality_floor none" in text
    assert "extended_thinking False max_tokens 256" in text


def test_detail_shows_thinking_tokens_cost_time_and_repair(analyst: Client, key) -> None:  # type: ignore[no-untyped-def]
    log = make_request_log(key, prompt_tokens=1000, cached_tokens=600, completion_tokens=400, reasoning_tokens=300,
                           cost_micros=4321, latency_ms=1500, ttft_ms=320, dropped_params=["store", "metadata"],
                           structured_output_repair={"applied": True, "method": "code_fence"})
    make_routing_decision(log)
    text = _text(analyst.get(f"/portal/logs/{log.request_id}/"))
    assert "off · easy_prompt : auto turned thinking off: the prompt is among the easiest it classifies" in text
    assert "Prompt 1000 Cached 600 Completion 400 Reasoning 300" in text
    assert "$0.004321" in text and "4321 micro-dollars" in text
    assert "Latency 1500 ms TTFT 320 ms" in text
    assert "Dropped params store , metadata" in text
    assert "Structured output repair applied : True · method : code_fence" in text


def test_detail_of_a_request_that_never_reached_routing(analyst: Client, key) -> None:  # type: ignore[no-untyped-def]
    log = make_request_log(key, final_disposition="rejected", status_code=400, error_code="invalid_value",
                           model_served="", attempts=[])
    text = _text(analyst.get(f"/portal/logs/{log.request_id}/"))
    assert "This request never reached routing (invalid_value)." in text


def test_detail_of_an_unknown_request_is_a_404(analyst: Client) -> None:
    response = analyst.get("/portal/logs/req-0000000000000000/")
    assert response.status_code == 404 and b"No request req-0000000000000000" in response.content


def test_detail_shows_each_guardrail_check_and_what_the_cost_is_made_of(analyst: Client, key) -> None:  # type: ignore[no-untyped-def]
    guardrails = [{"check": "pii", "where": "input", "action": "redact", "count": 2, "kinds": {"email": 1, "card": 1}},
                  {"check": "secrets", "where": "output", "action": "flag", "count": 0, "kinds": {}}]
    breakdown = {"attempts": [{"route": "simulated/alpha-7b", "model": "alpha-7b", "reason": "reask", "own_key": False,
                               "provider_picos": 200_000_000},
                              {"route": "simulated/alpha-7b", "model": "alpha-7b", "reason": "served", "own_key": False,
                               "provider_picos": 295_300_000}],
                 "provider_picos": 495_300_000, "provider_micros": 495, "markup_bps": 550, "markup_micros": 28,
                 "guardrails": [{"check": "pii", "where": "input", "price_micros": 50},
                                {"check": "secrets", "where": "output", "price_micros": 20}],
                 "guardrail_micros": 70, "waived": [], "cost_micros": 593}
    log = make_request_log(key, cost_micros=593, guardrails=guardrails, cost_breakdown=breakdown)
    make_routing_decision(log)
    text = _text(analyst.get(f"/portal/logs/{log.request_id}/"))
    assert "pii on the input redact 2 found: card 1, email 1" in text
    assert "secrets on the output flag nothing found" in text
    assert "Provider price $0.000495 2 billed calls: reask, served" in text
    assert "Markup $0.000028 5.50%" in text
    assert "Check pii on the input $0.000050" in text
    assert "Check secrets on the output $0.000020" in text
    assert "Total $0.000593" in text


def test_detail_names_the_rule_that_waived_the_price(analyst: Client, key) -> None:  # type: ignore[no-untyped-def]
    breakdown = {"attempts": [{"route": "simulated/alpha-7b", "model": "alpha-7b", "reason": "served", "own_key": False,
                               "provider_picos": 495_300_000}],
                 "provider_picos": 495_300_000, "provider_micros": 0, "markup_bps": 500, "markup_micros": 0,
                 "guardrails": [], "guardrail_micros": 0,
                 "waived": [{"rule": "free_plan", "waived": "provider price, markup and guardrail checks", "micros": 520}],
                 "cost_micros": 0}
    log = make_request_log(key, cost_micros=0, cost_breakdown=breakdown)
    text = _text(analyst.get(f"/portal/logs/{log.request_id}/"))
    assert "Waived by free_plan $0.000520 provider price, markup and guardrail checks" in text
    assert "Guardrail checks" not in text  # none ran: no section
