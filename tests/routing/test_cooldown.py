"""Fleet-wide cooldown in the servable step: skipped with why and until when, probed after half of it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from routing.decision import RoutingError
from routing.snapshot import RouteCooldownSnap
from tests.routing.conftest import (
    chain_ids,
    decide_with,
    make_model,
    make_request,
    make_route,
    make_snapshot,
    step,
    step_text,
)

SINCE = datetime(2026, 10, 12, 14, 1, 7, tzinfo=UTC).timestamp()
UNTIL = SINCE + 120  # 14:03:07
COOLING = RouteCooldownSnap(since=SINCE, until=UNTIL, reason="75% of its last 12 attempts failed")


def _snapshot(probe_share: float = 0.05):  # type: ignore[no-untyped-def]
    models = [make_model(id="a", benchmarks={"chat": 0.9}), make_model(id="b", benchmarks={"chat": 0.8})]
    routes = [make_route(model_id="a", cooldown=COOLING), make_route(model_id="b")]
    return replace(make_snapshot(models, routes), probe_share=probe_share)


def test_a_cooling_route_is_skipped_with_why_and_until_when() -> None:
    decision = decide_with(_snapshot(), make_request(now=SINCE + 10, ticket=0.0))
    assert chain_ids(decision) == ["groq/b"]
    assert step(decision, "servable") == {"step": "servable", "in": 2, "out": 1,
                                          "cooldown_until": {"groq/a": "2026-10-12T14:03:07Z"}}
    assert step_text(decision, "servable") == (
        "1 of 2 models has a servable route; the others have routes cooling down after failing across the fleet "
        "(groq/a until 2026-10-12T14:03:07Z: 75% of its last 12 attempts failed).")


def test_after_half_the_cooldown_a_share_of_requests_probes_the_route() -> None:
    snapshot = _snapshot(probe_share=0.05)
    assert chain_ids(decide_with(snapshot, make_request(now=SINCE + 61, ticket=0.01)))[0] == "groq/a"
    assert chain_ids(decide_with(snapshot, make_request(now=SINCE + 61, ticket=0.5))) == ["groq/b"]
    assert chain_ids(decide_with(snapshot, make_request(now=SINCE + 59, ticket=0.01))) == ["groq/b"]


def test_a_cooldown_past_its_end_no_longer_skips_the_route() -> None:
    assert chain_ids(decide_with(_snapshot(), make_request(now=UNTIL, ticket=0.9)))[0] == "groq/a"


def test_a_named_model_whose_only_route_cools_says_so() -> None:
    snapshot = make_snapshot([make_model(id="a")], [make_route(model_id="a", cooldown=COOLING)])
    with pytest.raises(RoutingError) as caught:
        decide_with(snapshot, make_request(model="a", now=SINCE, ticket=0.0))
    assert caught.value.message == (
        "a has no servable route: it has routes cooling down after failing across the fleet "
        "(groq/a until 2026-10-12T14:03:07Z: 75% of its last 12 attempts failed).")
