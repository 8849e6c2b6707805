"""Routing › Policies: admins create and edit (every change a version, shown as a diff, restorable), dry-run
an edit over logged requests, and attach policies; analysts read and get 403 on every write; another
organization's policy is a 404."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import Client

from inferbase.accounts.models import Organization
from inferbase.portal.policy_form import PolicyForm
from observability.models import RequestLog, RoutingDecision
from routing.models import PolicyVersion, RoutingPolicy
from routing.policies import POLICY_FIELDS
from routing.services import catalog_load
from routing.snapshot import VERSION_KEY

from .conftest import at, make_api_key, make_project, make_request_log, make_routing_decision, make_user

pytestmark = pytest.mark.django_db

CHEAP, DEAR = "meta-llama-3.1-8b", "anthropic-claude-sonnet-4.5"


def _form(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "Frugal", "pool": ["alpha-7b", "beta-70b"], "allow_variants": "on", "objective": "cost",
        "quality_floor": "basic", "chain_length": "2", "first_token_timeout_ms": "5000", "total_deadline_ms": "30000",
        "max_cost_micros": "", "structured_output_extraction": "on", "action": "save",
    }
    data.update(overrides)
    return {k: v for k, v in data.items() if v is not None}


def _policy(org: Organization, **fields: Any) -> RoutingPolicy:
    return RoutingPolicy.objects.create(organization=org, **{"name": "Acme policy", **fields})


def test_admin_creates_a_policy_from_model_names_as_version_1(admin: Client, acme: Organization, models: None) -> None:
    page = admin.get("/portal/policies/new/")
    assert page.status_code == 200
    assert b'<option value="alpha-7b">Alpha 7B (alpha-7b)</option>' in page.content  # chosen by name
    response = admin.post("/portal/policies/new/", _form(max_cost_micros="900", floor_coding="strict",
                                                          applies_to_organization="on"))
    policy = RoutingPolicy.objects.get(organization=acme, name="Frugal")
    assert response.status_code == 302 and response["Location"] == f"/portal/policies/{policy.pk}/"
    assert policy.pool == ["alpha-7b", "beta-70b"] and policy.objective == "cost" and policy.chain_length == 2
    assert policy.max_cost_micros == 900 and policy.quality_floor_by_task == {"coding": "strict"}
    assert policy.structured_output_extraction and not policy.structured_output_reask
    version = policy.versions.get()
    assert version.number == 1 and version.author == "ada" and version.fields["objective"] == "cost"
    acme.refresh_from_db()
    assert acme.default_policy_id == policy.pk
    detail = admin.get(response["Location"]).content.decode()
    assert "Alpha 7B" in detail and "Version 1" in detail and "<li>the organization's default</li>" in detail


def test_the_policy_form_has_a_field_for_everything_the_engine_reads(db: None) -> None:
    form = PolicyForm(_form(allowed_providers=["groq"], data_regions=["eu"], floor_maths="strict"),
                      models=[("alpha-7b", "Alpha 7B"), ("beta-70b", "Beta 70B")], providers=["groq"],
                      regions=["eu"], projects={}, keys={}, taken_names=set())
    assert form.is_valid(), form.errors
    fields = form.policy_fields()
    assert set(fields) == set(POLICY_FIELDS)  # a field the form lacked would be missing here
    assert fields["allowed_providers"] == ["groq"] and fields["data_regions"] == ["eu"]
    assert fields["quality_floor_by_task"] == {"maths": "strict"}


def test_a_policy_made_outside_the_portal_shows_with_no_history_yet(analyst: Client, acme: Organization) -> None:
    policy = _policy(acme, pool=["alpha-7b"])
    response = analyst.get(f"/portal/policies/{policy.pk}/")
    assert response.status_code == 200 and b"No version recorded yet" in response.content


def test_validation_explains_each_error_next_to_its_field(admin: Client, acme: Organization, models: None) -> None:
    _policy(acme, name="Taken")
    response = admin.post("/portal/policies/new/", _form(
        name="Taken", first_token_timeout_ms="40000", total_deadline_ms="30000", chain_length="11",
        structured_output_extraction=None, structured_output_reask="on", pool=["no-such-model"]))
    assert response.status_code == 400
    body = response.content.decode()

    def error_of(field: str) -> str:
        block = re.search(rf'<div class="field invalid" id="field-{field}">(.*?)</div>', body, re.S)
        assert block is not None, f"{field} is not marked invalid"
        return " ".join(re.findall(r'<p class="field-error">(.*?)</p>', block.group(1)))

    assert "already named &#x27;Taken&#x27;" in error_of("name")
    assert "must be at least the first-token budget (40000 ms)" in error_of("total_deadline_ms")
    assert "less than or equal to 10" in error_of("chain_length")
    assert "Re-asking needs extraction on" in error_of("structured_output_reask")
    assert "no-such-model is not one of the available choices" in error_of("pool")
    assert RoutingPolicy.objects.filter(organization=acme).count() == 1


def test_every_edit_is_a_new_version_shown_as_a_diff(admin: Client, acme: Organization, models: None,
                                                     django_capture_on_commit_callbacks) -> None:  # type: ignore[no-untyped-def]
    policy = _policy(acme, objective="balanced", pool=["alpha-7b"])  # made outside the portal
    cache.set(VERSION_KEY, "before")
    with django_capture_on_commit_callbacks(execute=True):
        response = admin.post(f"/portal/policies/{policy.pk}/edit/", _form(name="Acme policy", objective="cost"))
    assert response.status_code == 302
    assert cache.get(VERSION_KEY) != "before"  # every process rebuilds its snapshot on its next check
    assert list(policy.versions.values_list("number", "note")) == [
        (2, ""), (1, "as it was before its first portal edit")]
    body = admin.get(f"/portal/policies/{policy.pk}/").content.decode()
    history = body[body.index('id="policy-history"'):]
    newest = policy.versions.first()
    assert f"{newest.created_at:%Y-%m-%d %H:%M:%S} UTC · ada" in history  # when, and who
    assert re.search(r'<code>objective</code>: <span class="before">balanced</span> → <span class="after">cost</span>',
                     history)
    # The pool by model name (with the id beside it), never a list of raw ids.
    assert ('<code>pool</code>: <span class="before">Alpha 7B (alpha-7b)</span> → '
            '<span class="after">Alpha 7B (alpha-7b), Beta 70B (beta-70b)</span>') in history
    assert "[&#x27;" not in history
    # Saving the same fields again records nothing new.
    admin.post(f"/portal/policies/{policy.pk}/edit/", _form(name="Acme policy", objective="cost"))
    assert policy.versions.count() == 2


def test_a_version_is_restored_as_a_new_version(admin: Client, acme: Organization, models: None) -> None:
    policy = _policy(acme, objective="quality")
    admin.post(f"/portal/policies/{policy.pk}/edit/", _form(name="Acme policy", objective="cost"))
    response = admin.post(f"/portal/policies/{policy.pk}/versions/1/restore/")
    assert response.status_code == 302
    policy.refresh_from_db()
    assert policy.objective == "quality"
    newest = policy.versions.first()
    assert newest.number == 3 and newest.note == "restored from version 1" and newest.author == "ada"


def test_analysts_read_policies_and_their_history_but_every_write_is_403(analyst: Client, acme: Organization,
                                                                         models: None) -> None:
    policy = _policy(acme)
    PolicyVersion.objects.create(policy=policy, number=1, fields={"name": "Acme policy"})
    listing = analyst.get("/portal/policies/")
    assert listing.status_code == 200 and b"Acme policy" in listing.content and b"New policy" not in listing.content
    detail = analyst.get(f"/portal/policies/{policy.pk}/")
    assert detail.status_code == 200 and b"Version 1" in detail.content
    assert b'id="edit-policy"' not in detail.content and b"Restore" not in detail.content
    for url in ("/portal/policies/new/", f"/portal/policies/{policy.pk}/edit/"):
        assert analyst.get(url).status_code == 403, url
        assert analyst.post(url, _form()).status_code == 403, url
    assert analyst.post(f"/portal/policies/{policy.pk}/versions/1/restore/").status_code == 403
    assert RoutingPolicy.objects.count() == 1 and policy.versions.count() == 1


def test_another_organizations_policy_is_a_404_on_every_url(outsider: Client, acme: Organization,
                                                            models: None) -> None:
    policy = _policy(acme, name="Acme secret")
    PolicyVersion.objects.create(policy=policy, number=1, fields={"name": "Acme secret"})
    assert b"Acme secret" not in outsider.get("/portal/policies/").content
    for url in (f"/portal/policies/{policy.pk}/", f"/portal/policies/{policy.pk}/edit/"):
        assert outsider.get(url).status_code == 404, url
    assert outsider.post(f"/portal/policies/{policy.pk}/edit/", _form(objective="quality")).status_code == 404
    assert outsider.post(f"/portal/policies/{policy.pk}/versions/1/restore/").status_code == 404
    policy.refresh_from_db()
    assert policy.objective == "balanced"


def test_a_policy_attaches_only_to_the_organizations_own_projects_and_keys(admin: Client, acme: Organization,
                                                                           globex: Organization, models: None) -> None:
    policy = _policy(acme)
    ours = make_api_key(make_project(acme, name="web"))
    theirs = make_api_key(make_project(globex, name="their-web"))
    page = admin.get(f"/portal/policies/{policy.pk}/edit/").content.decode()
    assert "their-web" not in page and theirs.prefix not in page
    response = admin.post(f"/portal/policies/{policy.pk}/edit/", _form(
        name="Acme policy", applies_to_keys=[str(ours.pk)], applies_to_projects=[str(ours.project_id)]))
    assert response.status_code == 302
    ours.refresh_from_db()
    ours.project.refresh_from_db()
    assert ours.policy_id == policy.pk and ours.project.default_policy_id == policy.pk
    refused = admin.post(f"/portal/policies/{policy.pk}/edit/", _form(name="Acme policy",
                                                                       applies_to_keys=[str(theirs.pk)]))
    assert refused.status_code == 400 and b"is not one of the available choices" in refused.content


@pytest.fixture
def catalog(db: None) -> None:
    catalog_load(catalog_path=Path(settings.INFERBASE_CATALOG_PATH),
                 evidence_path=Path(settings.INFERBASE_EVIDENCE_PATH))


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record (and refuse) any outbound connection: every upstream call goes through httpx, over a socket."""
    attempts: list[str] = []

    def refuse(what: str):  # type: ignore[no-untyped-def]
        def call(*args: Any, **kwargs: Any) -> None:
            attempts.append(what)
            raise OSError(f"the test forbids {what}")
        return call

    monkeypatch.setattr(httpx.Client, "send", refuse("httpx.Client.send"))
    monkeypatch.setattr(httpx.AsyncClient, "send", refuse("httpx.AsyncClient.send"))
    monkeypatch.setattr(socket.socket, "connect", refuse("socket.connect"))
    return attempts


def test_dry_run_replays_logged_requests_under_the_edit_without_saving(admin: Client, acme: Organization,
                                                                       globex: Organization, catalog: None,
                                                                       no_network: list[str]) -> None:
    policy = _policy(acme, objective="quality", pool=[CHEAP, DEAR])
    key = make_api_key(make_project(acme))
    for _ in range(3):
        make_routing_decision(make_request_log(key, model_served=DEAR, prompt_tokens=800, task="chat",
                                               complexity="standard", requested={"max_tokens": 300}))
    other = make_api_key(make_project(globex))
    make_routing_decision(make_request_log(other, model_served=DEAR))  # another organization's: never replayed
    response = admin.post(f"/portal/policies/{policy.pk}/edit/", _form(
        name="Acme policy", pool=[CHEAP, DEAR], objective="cost", quality_floor="none", action="dry_run",
        dry_run_requests="500"))
    assert response.status_code == 200
    body = response.content.decode()
    assert "Dry-run: 3 logged requests" in body
    assert re.search(r'id="dry-run-changed">3<', body)
    changes = body[body.index('id="dry-run-changes"'):]
    assert re.search(r"<td>Claude Sonnet 4.5</td><td>Llama 3.1 8B Instruct</td><td class=\"num\">3</td>", changes)
    difference = int(re.search(r'id="dry-run-cost-difference">\+?(-?\d+)<', body).group(1))
    assert difference < 0  # cheaper: the stored estimates were 100 each, now far less
    # Side by side: the pick, its estimated cost and expected wait, then (as stored) and now.
    side = body[body.index('id="dry-run-rows"'):]
    pairs = re.findall(rf'<td title="{DEAR}">Claude Sonnet 4.5</td><td class="num">100</td><td class="num">900 ms</td>\s*'
                       rf'<td title="{CHEAP}">Llama 3.1 8B Instruct</td><td class="num">(\d+)</td>'
                       r'<td class="num">(\d+) ms</td>', side)
    assert len(pairs) == 3 and all(int(cost) < 100 for cost, _ in pairs)
    assert sum(int(cost) for cost, _ in pairs) - 300 == difference
    assert no_network == []  # no upstream called
    policy.refresh_from_db()
    assert policy.objective == "quality" and policy.versions.count() == 0  # nothing saved
    assert RequestLog.objects.count() == 4  # and nothing logged


def test_dry_run_replays_the_last_500_requests_when_n_is_left_empty(admin: Client, acme: Organization,
                                                                    catalog: None) -> None:
    policy = _policy(acme, pool=[CHEAP, DEAR])
    page = admin.get(f"/portal/policies/{policy.pk}/edit/").content.decode()
    assert re.search(r'<input type="number" name="dry_run_requests" value="500"', page)
    key = make_api_key(make_project(acme))
    logs = RequestLog.objects.bulk_create([RequestLog(
        request_id=f"req-{n:016x}", created_at=at(n), organization_id=acme.pk, project_id=key.project_id,
        api_key_id=key.pk, model_requested="auto", model_served=DEAR, status_code=200, final_disposition="served",
        prompt_tokens=800, task="chat", complexity="standard") for n in range(501)])
    RoutingDecision.objects.bulk_create([RoutingDecision(
        request_id=log.request_id, organization_id=acme.pk, created_at=log.created_at,
        routing={"model": DEAR, "alternatives": [{"model": DEAR, "expected_cost_micros": 100}]}) for log in logs])
    response = admin.post(f"/portal/policies/{policy.pk}/edit/", _form(
        name="Acme policy", pool=[CHEAP, DEAR], objective="cost", action="dry_run", dry_run_requests=""))
    assert response.status_code == 200 and b"Dry-run: 500 logged requests" in response.content


def test_dry_run_over_a_time_range_replays_only_its_requests(admin: Client, acme: Organization,
                                                             catalog: None) -> None:
    policy = _policy(acme, pool=[CHEAP, DEAR])
    key = make_api_key(make_project(acme))
    logs = {minutes: make_request_log(key, created_at=at(minutes), model_served=DEAR, task="chat",
                                      complexity="standard") for minutes in (180, 60, 5)}
    for log in logs.values():
        make_routing_decision(log)
    response = admin.post(f"/portal/policies/{policy.pk}/edit/", _form(
        name="Acme policy", pool=[CHEAP, DEAR], action="dry_run", dry_run_requests="500",
        dry_run_since=at(120).strftime("%Y-%m-%dT%H:%M"), dry_run_until=at(30).strftime("%Y-%m-%dT%H:%M")))
    body = response.content.decode()
    assert response.status_code == 200 and "Dry-run: 1 logged request<" in body
    assert re.findall(r'<tr data-request-id="(req-[0-9a-f]+)"', body) == [logs[60].request_id]


def test_dry_run_over_an_empty_range_says_so(admin: Client, acme: Organization, catalog: None) -> None:
    policy = _policy(acme)
    response = admin.post(f"/portal/policies/{policy.pk}/edit/", _form(
        name="Acme policy", pool=[CHEAP], action="dry_run", dry_run_since="2020-01-01T00:00",
        dry_run_until="2020-01-02T00:00"))
    assert response.status_code == 200 and b"No logged request to replay in that range." in response.content


def test_every_policy_form_requires_the_csrf_token(acme: Organization, models: None) -> None:
    policy = _policy(acme)
    PolicyVersion.objects.create(policy=policy, number=1, fields={"name": "Acme policy"})
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_user(acme, "admin"))
    for url in ("/portal/policies/new/", f"/portal/policies/{policy.pk}/edit/",
                f"/portal/policies/{policy.pk}/versions/1/restore/"):
        assert client.post(url, _form()).status_code == 403, url
    assert RoutingPolicy.objects.count() == 1 and policy.versions.count() == 1
    page = client.get(f"/portal/policies/{policy.pk}/edit/").content.decode()
    assert 'name="csrfmiddlewaretoken"' in page
