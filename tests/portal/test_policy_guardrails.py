"""Routing › Policies: a policy's guardrail checks edited in the portal form (no typed JSON). What the form saves
is what billing's parser reads; an existing configuration shows in the form and survives an edit of other
fields exactly; each error is in words next to its field; a version's diff names each changed check."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from billing.guardrails.config import (
    MAX_BLOCKLIST_PHRASES,
    MAX_PHRASE_CHARS,
    MAX_PRICE_MICROS,
    guardrail_config_parse,
)
from inferbase.accounts.models import Organization
from routing.models import RoutingPolicy

from .html_forms import form_data

pytestmark = pytest.mark.django_db

# Checks in an order the form would not choose (blocklist before pii) and kinds out of the catalog's order:
# the round trip keeps both, since the first blocking check is the one a 400 names.
CONFIG = {
    "input": [{"check": "blocklist", "action": "flag", "price_micros": 5},
              {"check": "pii", "action": "redact", "price_micros": 50, "kinds": ["card", "email"]}],
    "output": [{"check": "secrets", "action": "block", "price_micros": 20},
               {"check": "pii", "action": "flag", "price_micros": 0}],
    "blocklist": ["Project Falcon", "acme merger"],
}
BASE = {"name": "Guarded", "allow_variants": "on", "objective": "balanced", "quality_floor": "standard",
        "chain_length": "4", "first_token_timeout_ms": "15000", "total_deadline_ms": "60000",
        "structured_output_extraction": "on", "action": "save"}


def _policy(org: Organization, **fields: Any) -> RoutingPolicy:
    return RoutingPolicy.objects.create(organization=org, **{"name": "Guarded", **fields})


def _edit_page_data(client: Client, policy: RoutingPolicy) -> dict[str, list[str]]:
    page = client.get(f"/portal/policies/{policy.pk}/edit/")
    assert page.status_code == 200
    data = form_data(page.content.decode(), "policy-form")
    data.pop("csrfmiddlewaretoken", None)
    return {**data, "action": ["save"]}


def _errors(body: str, field: str) -> str:
    block = re.search(rf'<div class="field invalid" id="field-{field}">(.*?)(?=<div class="field|</td>|</section>)',
                      body, re.S)
    assert block is not None, f"{field} is not marked invalid"
    return " ".join(re.findall(r'<p class="field-error">(.*?)</p>', block.group(1)))


def test_a_policys_guardrails_show_in_the_form_and_save_back_unchanged(admin: Client, acme: Organization,
                                                                       models: None) -> None:
    policy = _policy(acme, guardrails=CONFIG)
    data = _edit_page_data(admin, policy)
    assert data["guardrails_input_pii_action"] == ["redact"] and data["guardrails_input_pii_price"] == ["50"]
    assert sorted(data["guardrails_input_pii_kinds"]) == ["card", "email"]
    assert data["guardrails_output_secrets_action"] == ["block"] and data["guardrails_input_secrets_action"] == ["off"]
    assert data["guardrails_blocklist"] == ["Project Falcon\nacme merger"]
    response = admin.post(f"/portal/policies/{policy.pk}/edit/", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    policy.refresh_from_db()
    assert policy.guardrails == CONFIG  # exactly as stored: order of checks and kinds included
    assert list(policy.versions.values_list("number", flat=True)) == [1]  # nothing changed, nothing recorded


def test_an_edit_of_another_field_keeps_the_guardrails(admin: Client, acme: Organization, models: None) -> None:
    policy = _policy(acme, guardrails=CONFIG)
    data = {**_edit_page_data(admin, policy), "objective": ["cost"]}
    assert admin.post(f"/portal/policies/{policy.pk}/edit/", data).status_code == 302
    policy.refresh_from_db()
    assert policy.objective == "cost" and policy.guardrails == CONFIG
    newest = policy.versions.first()
    assert newest.number == 2 and newest.fields["guardrails"] == CONFIG
    history = admin.get(f"/portal/policies/{policy.pk}/").content.decode()
    latest = history[history.index('data-version="2"'):history.index('data-version="1"')]
    assert "<code>objective</code>" in latest and "guardrails" not in latest


def test_an_admin_sets_checks_without_json_and_the_engine_reads_them(admin: Client, acme: Organization,
                                                                     models: None) -> None:
    response = admin.post("/portal/policies/new/", {
        **BASE, "guardrails_input_pii_action": "block", "guardrails_input_pii_price": "50",
        "guardrails_input_pii_kinds": ["email", "iban"], "guardrails_output_secrets_action": "redact",
        "guardrails_output_blocklist_action": "block", "guardrails_output_blocklist_price": "7",
        "guardrails_input_secrets_price": "99",  # its check is off: the price goes nowhere
        "guardrails_blocklist": "  project   falcon \n\nACME merger\nProject Falcon\n"})
    assert response.status_code == 302
    policy = RoutingPolicy.objects.get(organization=acme, name="Guarded")
    assert policy.guardrails == {
        "input": [{"check": "pii", "action": "block", "price_micros": 50, "kinds": ["email", "iban"]}],
        "output": [{"check": "secrets", "action": "redact", "price_micros": 0},
                   {"check": "blocklist", "action": "block", "price_micros": 7}],
        "blocklist": ["project falcon", "ACME merger"]}
    assert guardrail_config_parse(policy.guardrails).as_dict() == policy.guardrails  # the parser's own form
    detail = admin.get(response["Location"]).content.decode()
    rules = detail[detail.index('id="policy-guardrails"'):]
    assert "input pii: block, 50 µ$ (email, iban)" in rules and "output blocklist: block, 7 µ$" in rules


def test_a_policy_with_no_checks_stores_no_configuration(admin: Client, acme: Organization, models: None) -> None:
    assert admin.post("/portal/policies/new/", BASE).status_code == 302
    assert RoutingPolicy.objects.get(organization=acme, name="Guarded").guardrails == {}


def test_each_guardrail_error_is_explained_next_to_its_field(admin: Client, acme: Organization, models: None) -> None:
    response = admin.post("/portal/policies/new/", {
        **BASE, "guardrails_input_pii_action": "block", "guardrails_input_pii_price": "-1",
        "guardrails_output_secrets_action": "flag", "guardrails_output_secrets_price": str(MAX_PRICE_MICROS + 1),
        "guardrails_input_secrets_action": "redact", "guardrails_input_secrets_price": "1.5",
        "guardrails_input_secrets_kinds": ["openai_key", "email"], "guardrails_output_pii_action": "shout",
        "guardrails_blocklist": f"fine\n{'x' * (MAX_PHRASE_CHARS + 1)}"})
    assert response.status_code == 400
    body = response.content.decode()
    price = "A price is a whole number of micro-dollars from 0 to 1,000,000 ($1) per check."
    assert price in _errors(body, "guardrails_input_pii_price")
    assert price in _errors(body, "guardrails_output_secrets_price")
    assert price in _errors(body, "guardrails_input_secrets_price")
    assert "email is not one of the available choices" in _errors(body, "guardrails_input_secrets_kinds")
    assert "shout is not one of the available choices" in _errors(body, "guardrails_output_pii_action")
    assert (f"Line 2 has {MAX_PHRASE_CHARS + 1} characters: a phrase may have at most {MAX_PHRASE_CHARS}."
            in _errors(body, "guardrails_blocklist"))
    assert 'id="field-guardrails_input_pii_action"' in body and 'class="field invalid" id="field-guardrails_input_pii_action"' not in body
    assert not RoutingPolicy.objects.filter(organization=acme).exists()


def test_a_blocklist_check_needs_phrases_and_the_list_has_a_limit(admin: Client, acme: Organization,
                                                                   models: None) -> None:
    response = admin.post("/portal/policies/new/", {**BASE, "guardrails_input_blocklist_action": "block",
                                                    "guardrails_blocklist": " \n"})
    assert response.status_code == 400
    assert ("The blocklist check is on for the input: list at least one phrase, one per line, or turn the check off."
            in _errors(response.content.decode(), "guardrails_blocklist"))
    too_many = "\n".join(f"phrase {n}" for n in range(MAX_BLOCKLIST_PHRASES + 1))
    response = admin.post("/portal/policies/new/", {**BASE, "guardrails_blocklist": too_many})
    assert response.status_code == 400
    assert (f"At most {MAX_BLOCKLIST_PHRASES:,} phrases: you listed {MAX_BLOCKLIST_PHRASES + 1:,}."
            in _errors(response.content.decode(), "guardrails_blocklist"))
    assert not RoutingPolicy.objects.filter(organization=acme).exists()


def test_the_history_names_each_changed_check_in_words(admin: Client, acme: Organization, models: None) -> None:
    assert admin.post("/portal/policies/new/", {
        **BASE, "guardrails_input_pii_action": "redact", "guardrails_input_pii_price": "50",
        "guardrails_blocklist": "project falcon"}).status_code == 302
    policy = RoutingPolicy.objects.get(organization=acme, name="Guarded")
    data = {**_edit_page_data(admin, policy), "guardrails_input_pii_action": ["block"],
            "guardrails_output_secrets_action": ["flag"], "guardrails_output_secrets_price": ["20"],
            "guardrails_output_secrets_kinds": ["jwt"], "guardrails_blocklist": ["project falcon\nacme merger"]}
    assert admin.post(f"/portal/policies/{policy.pk}/edit/", data).status_code == 302
    body = admin.get(f"/portal/policies/{policy.pk}/").content.decode()
    history = body[body.index('id="policy-history"'):]
    second, first = history[:history.index('data-version="1"')], history[history.index('data-version="1"'):]
    assert ('<code>guardrails · input pii</code>: <span class="before">redact, 50 µ$</span> → '
            '<span class="after">block, 50 µ$</span>') in second
    assert ('<code>guardrails · output secrets</code>: <span class="before">off</span> → '
            '<span class="after">flag, 20 µ$ (jwt)</span>') in second
    assert ('<code>guardrails · blocklist</code>: <span class="before">project falcon</span> → '
            '<span class="after">project falcon, acme merger</span>') in second
    assert "<code>guardrails · input pii</code>: redact, 50 µ$</li>" in first
    assert "{&#x27;" not in history and "[&#x27;" not in history  # no Python repr


def test_a_version_from_before_guardrails_were_recorded_reads_as_no_checks(admin: Client, acme: Organization,
                                                                          models: None) -> None:
    policy = _policy(acme)
    admin.post(f"/portal/policies/{policy.pk}/edit/", {**BASE, "objective": "cost"})
    older = policy.versions.get(number=1)
    older.fields.pop("guardrails")  # as versions recorded before this field was
    older.save()
    body = admin.get(f"/portal/policies/{policy.pk}/").content.decode()
    assert "guardrails" not in body[body.index('id="policy-history"'):]
    assert admin.post(f"/portal/policies/{policy.pk}/edit/", {**BASE, "objective": "cost"}).status_code == 302
    assert policy.versions.count() == 2  # the same fields again: no new version


def test_the_dry_run_works_with_guardrails_in_the_edit(admin: Client, acme: Organization, models: None) -> None:
    policy = _policy(acme, guardrails=CONFIG)
    data = {**_edit_page_data(admin, policy), "guardrails_input_pii_action": ["block"], "action": ["dry_run"]}
    response = admin.post(f"/portal/policies/{policy.pk}/edit/", data)
    assert response.status_code == 200 and 'id="dry-run-result"' in response.content.decode()
    policy.refresh_from_db()
    assert policy.guardrails == CONFIG and not policy.versions.exists()


def test_restoring_a_version_restores_its_guardrails(admin: Client, acme: Organization, models: None) -> None:
    policy = _policy(acme)
    admin.post(f"/portal/policies/{policy.pk}/edit/", {**BASE, "guardrails_input_pii_action": "block"})
    legacy = policy.versions.get(number=1)
    legacy.fields.pop("guardrails")  # recorded before guardrails were: reads, and restores, as no checks
    legacy.save()
    admin.post(f"/portal/policies/{policy.pk}/edit/", {**BASE, "guardrails_input_secrets_action": "flag"})
    assert admin.post(f"/portal/policies/{policy.pk}/versions/2/restore/").status_code == 302
    policy.refresh_from_db()
    assert policy.guardrails == {"input": [{"check": "pii", "action": "block", "price_micros": 0}], "output": [],
                                 "blocklist": []}
    assert admin.post(f"/portal/policies/{policy.pk}/versions/1/restore/").status_code == 302
    policy.refresh_from_db()
    assert policy.guardrails == {} and policy.versions.first().number == 5
