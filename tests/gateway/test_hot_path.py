"""The hot path's rules: the decision runs on the in-memory snapshot, with no database query."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from inferbase.accounts.selectors import KeyInfo
from inferbase.api.validation import chat_request_parse
from inferbase.gateway.exchange import Exchange
from inferbase.gateway.route import route_request
from inferbase.gateway.state import AppState, _snapshot_load
from routing.services import catalog_load

pytestmark = pytest.mark.django_db

KEY = KeyInfo(key_id=1, project_id=1, organization_id=1, plan="pro", markup_bps=500, policy_id=None, active=True)


@pytest.fixture
def snapshot():  # type: ignore[no-untyped-def]
    catalog_load(catalog_path=Path(settings.INFERBASE_CATALOG_PATH), evidence_path=Path(settings.INFERBASE_EVIDENCE_PATH))
    return _snapshot_load("test")


def test_routing_a_request_makes_no_database_query(snapshot, django_assert_num_queries) -> None:  # type: ignore[no-untyped-def]
    state = AppState.from_settings()
    chat = chat_request_parse({"model": "auto", "messages": [{"role": "user", "content": "Sort a list in Python"}]})
    ex = Exchange(request_id="req-1", key=KEY, chat=chat)
    with django_assert_num_queries(0):
        decision = route_request(state, ex, snapshot)
    assert decision.chain
    assert ex.routed.routing["task"] == "coding"
    assert ex.routed.routing["object"] == "routing"


def test_second_identical_prompt_is_a_classification_cache_hit(snapshot) -> None:  # type: ignore[no-untyped-def]
    body = {"model": "auto", "messages": [{"role": "user", "content": "Translate 'good morning' into German, please"}]}
    first = Exchange(request_id="req-1", key=KEY, chat=chat_request_parse(body))
    second = Exchange(request_id="req-2", key=KEY, chat=chat_request_parse(body))
    state = AppState.from_settings()
    route_request(state, first, snapshot)
    route_request(state, second, snapshot)
    assert "classification_cached" not in first.routed.routing or first.routed.routing["classification_cached"] is False
    assert second.routed.routing["classification_cached"] is True
    assert second.routed.routing["task"] == first.routed.routing["task"]


def test_a_named_model_is_not_classified(snapshot) -> None:  # type: ignore[no-untyped-def]
    chat = chat_request_parse({"model": "meta-llama-3.3-70b", "messages": [{"role": "user", "content": "hi"}]})
    ex = Exchange(request_id="req-1", key=KEY, chat=chat)
    route_request(AppState.from_settings(), ex, snapshot)
    assert ex.routed.routing["task"] is None and ex.routed.routing["decisiveness_basis"] == "pinned"
