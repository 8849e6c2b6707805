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
