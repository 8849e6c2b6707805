"""The dry-run of a policy: logged requests routed again on paper, with no upstream."""

from __future__ import annotations

from typing import Any

from routing.policies import POLICY_FIELDS, policy_diff, policy_snap_from_fields
from routing.replay import ReplayRow, policy_replay, replay_request

from .conftest import make_model, make_policy, make_route, make_snapshot

NOW = 1_700_000_000.0


def _row(**overrides: Any) -> ReplayRow:
    values: dict[str, Any] = {
        "request_id": "req-1", "model_requested": "auto", "task": "chat", "complexity": "standard",
        "prompt_tokens": 1000, "stream": False, "requested": {"max_tokens": 200}, "project_id": None,
        "then_model": "dear", "then_cost_micros": 5000, "then_wait_ms": 900,
    }
    values.update(overrides)
    return ReplayRow(**values)


def _catalog():  # type: ignore[no-untyped-def]
    """A cheap weak model and a dear strong one."""
    cheap, dear = make_model(id="cheap", benchmarks={"chat": 0.6}), make_model(id="dear", benchmarks={"chat": 0.9})
    return make_snapshot([cheap, dear], [make_route(model_id="cheap", price_input=0.1, price_output=0.2),
                                         make_route(model_id="dear", price_input=5.0, price_output=15.0)])


def test_policy_replay_counts_the_decisions_a_cheaper_objective_changes() -> None:
    rows = [_row(request_id=f"req-{n}") for n in range(3)] + [_row(request_id="req-p", model_requested="dear")]
    result = policy_replay(rows, make_policy(objective="cost", quality_floor="none"), _catalog(), now=NOW)
    assert [o.now_model for o in result.outcomes] == ["cheap", "cheap", "cheap", "dear"]  # a named model stays
    assert result.changed == 3 and result.changes_by_model == (("dear", "cheap", 3),)
    assert result.then_cost_micros == 4 * 5000
    # cheap: 1000 prompt tokens at 0.1 plus 200 answer tokens at 0.2 = 140; dear: 5000 + 3000 = 8000
    assert result.now_cost_micros == 3 * 140 + 8000
    assert result.cost_difference_micros == 3 * 140 + 8000 - 20000
    assert all(o.now_wait_ms is not None for o in result.outcomes)


def test_policy_replay_keeps_the_picks_a_policy_does_not_change() -> None:
    result = policy_replay([_row()], make_policy(objective="quality"), _catalog(), now=NOW)
    assert result.changed == 0 and result.changes_by_model == () and result.outcomes[0].now_model == "dear"


def test_policy_replay_reports_a_request_the_edited_policy_cannot_route() -> None:
    result = policy_replay([_row()], make_policy(pool=("nowhere",)), _catalog(), now=NOW)
    outcome = result.outcomes[0]
    assert outcome.now_model is None and "No model is in the routing pool" in (outcome.now_error or "")
    assert result.not_routed_now == 1 and result.changes_by_model == (("dear", "—", 1),)


def test_replay_request_rebuilds_what_the_request_asked_of_routing() -> None:
    row = _row(task="tool_use", stream=True, project_id=7,
               requested={"max_tokens": 64, "extended_thinking": False,
                          "routing": {"optimize": "latency", "model_pool": ["cheap"], "unknown": 1}})
    request = replay_request(row, now=NOW, cost_multiplier=1.05)
    assert request.needs_tools and request.stream and request.max_tokens == 64
    assert request.extended_thinking is False and request.project_id == 7 and request.cost_multiplier == 1.05
    assert request.overrides.optimize == "latency" and request.overrides.model_pool == ("cheap",)
    assert request.ticket >= 1.0  # past every share: no exploration or probe in a dry-run


def test_policy_replay_follows_the_requests_own_narrowing() -> None:
    row = _row(requested={"routing": {"model_pool": ["cheap"]}})
    assert policy_replay([row], make_policy(), _catalog(), now=NOW).outcomes[0].now_model == "cheap"


def test_policy_diff_names_each_changed_field_with_before_and_after() -> None:
    before = {"name": "p", "objective": "cost", "pool": ["a"], "chain_length": 4}
    after = {"name": "p", "objective": "quality", "pool": ["a", "b"], "chain_length": 4}
    assert [(c.field, c.before, c.after) for c in policy_diff(before, after)] == [
        ("pool", ["a"], ["a", "b"]), ("objective", "cost", "quality")]


def test_policy_snap_from_fields_reads_every_recorded_field() -> None:
    fields = {"name": "Strict", "pool": ["a"], "allow_variants": False, "objective": "cost", "quality_floor": "strict",
              "quality_floor_by_task": {"coding": "basic"}, "require_pinned_in_pool": True,
              "allowed_providers": ["groq"], "data_regions": ["eu"], "first_token_timeout_ms": 900,
              "total_deadline_ms": 9000, "chain_length": 2, "max_cost_micros": 70,
              "structured_output_extraction": False, "structured_output_reask": True, "explore_unmeasured": True,
              "admit_unmeasured": True, "guardrails": {"input": [{"check": "pii", "action": "block"}]}}
    assert set(fields) == set(POLICY_FIELDS)
    snap = policy_snap_from_fields(fields, policy_id=3)
    assert snap == make_policy(id=3, name="Strict", source="key", pool=("a",), allow_variants=False, objective="cost",
                               quality_floor="strict", quality_floor_by_task={"coding": "basic"},
                               require_pinned_in_pool=True, allowed_providers=("groq",), data_regions=("eu",),
                               first_token_timeout_ms=900, total_deadline_ms=9000, chain_length=2, max_cost_micros=70,
                               structured_output_extraction=False, structured_output_reask=True,
                               explore_unmeasured=True, admit_unmeasured=True,
                               guardrails={"input": [{"check": "pii", "action": "block"}]})


