"""A policy's guardrails: validated in the admin by billing, compiled once per snapshot, none for a policy without."""

from __future__ import annotations

import logging

import pytest

from billing.guardrails import NO_GUARDRAILS
from inferbase.gateway.guard import guardrails_by_policy
from routing.snapshot import PolicySnap

CONFIG = {"input": [{"check": "pii", "action": "redact", "price_micros": 50}], "blocklist": []}


def test_only_policies_with_checks_are_compiled_and_a_bad_one_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    policies = [PolicySnap(id=1, name="a", source="key", guardrails=CONFIG), PolicySnap(id=2, name="b", source="key"),
                PolicySnap(id=3, name="c", source="key", guardrails={"input": [{"check": "pii", "action": "shout"}]})]
    with caplog.at_level(logging.ERROR, logger="inferbase.gateway"):
        compiled = guardrails_by_policy(policies)
    assert set(compiled) == {1}
    assert [c.spec.price_micros for c in compiled[1].input] == [50] and compiled[1] is not NO_GUARDRAILS
    assert "policy 3" in caplog.text and "input[0].action" in caplog.text


@pytest.mark.django_db
def test_the_admin_refuses_guardrails_billing_cannot_parse() -> None:
    from inferbase.accounts.admin import RoutingPolicyForm

    form = RoutingPolicyForm(data={"name": "p", "objective": "balanced", "quality_floor": "standard",
                                   "chain_length": 4, "first_token_timeout_ms": 15000, "total_deadline_ms": 60000,
                                   "guardrails": '{"input": [{"check": "pii", "action": "shout"}]}'})
    assert not form.is_valid()
    assert any("input[0].action" in e for e in form.errors["guardrails"])
