"""The admin shows logs and decisions, and lets no one, a superuser included, add, change or delete one."""

from __future__ import annotations

import json

import pytest
from django.forms.models import model_to_dict
from django.test import Client
from django.utils import timezone

from observability.models import RequestLog, RoutingDecision

pytestmark = pytest.mark.django_db


def _log() -> RequestLog:
    return RequestLog.objects.create(
        request_id="req-log", organization_id=1, project_id=1, api_key_id=1, created_at=timezone.now(),
        model_requested="auto", model_served="m", status_code=200, final_disposition="served", cost_micros=1234,
        reasoning_tokens=0, ttft_ms=5, attempts=[{"route": "simulated/m", "outcome": "served", "ms": 3}],
        dropped_params=["store"],
    )


def _decision() -> RoutingDecision:
    return RoutingDecision.objects.create(
        request_id="req-dec", organization_id=1, created_at=timezone.now(), routing_mode="balanced",
        classifier_task_family="chat", complexity_band="easy", eligibility_pool_size=3, decisiveness=0.5,
        final_disposition="served", chain_attempted=["simulated/m"], route_displays={"simulated/m": "M"},
        attempts=[{"route": "simulated/m", "outcome": "served", "ms": 3}],
        filter_trail=[{"step": "pool_loaded", "in": 3, "out": 3}],
        filter_trail_text=["3 models in the pool.", "2 passed the quality floor."],
        routing={"model": "m", "reasoning": "cheapest of the two <best>"},
    )


def _edit_payload(obj: RequestLog | RoutingDecision) -> dict[str, object]:
    """A form the admin would accept as an edit if it allowed one (JSON columns as JSON text)."""
    data = {k: json.dumps(v) if isinstance(v, list | dict) else v for k, v in model_to_dict(obj).items() if v is not None}
    return {**data, "cost_micros": 0, "final_disposition": "forged", "created_at_0": "2020-01-01", "created_at_1": "00:00"}


@pytest.mark.parametrize("make, url", [(_log, "observability/requestlog"), (_decision, "observability/routingdecision")])
def test_a_superuser_cannot_add_change_or_delete_a_record(admin_client: Client, make, url: str) -> None:  # type: ignore[no-untyped-def]
    record = make()
    before = model_to_dict(type(record).objects.get(pk=record.pk))
    payload = _edit_payload(record)
    assert admin_client.post(f"/admin/{url}/{record.pk}/change/", payload).status_code == 403
    assert admin_client.post(f"/admin/{url}/add/", {**payload, "request_id": "req-new"}).status_code == 403
    assert admin_client.get(f"/admin/{url}/add/").status_code == 403
    assert admin_client.post(f"/admin/{url}/{record.pk}/delete/", {"post": "yes"}).status_code == 403
    bulk = admin_client.post(f"/admin/{url}/", {"action": "delete_selected", "_selected_action": [record.pk], "post": "yes"})
    assert bulk.status_code in (200, 302)  # no such action: the changelist answers without deleting
    assert model_to_dict(type(record).objects.get(pk=record.pk)) == before
    assert type(record).objects.count() == 1


def test_the_log_pages_render_read_only(admin_client: Client) -> None:
    log = _log()
    listing = admin_client.get("/admin/observability/requestlog/")
    assert listing.status_code == 200 and "req-log" in listing.text
    page = admin_client.get(f"/admin/observability/requestlog/{log.pk}/change/")
    assert page.status_code == 200
    assert "1234" in page.text and "<textarea" not in page.text and 'name="cost_micros"' not in page.text
    assert "&quot;route&quot;: &quot;simulated/m&quot;" in page.text  # attempts, indented JSON in a <pre>


def test_the_decision_page_reads_as_text_not_form_fields(admin_client: Client) -> None:
    decision = _decision()
    listing = admin_client.get("/admin/observability/routingdecision/")
    assert listing.status_code == 200 and "req-dec" in listing.text
    page = admin_client.get(f"/admin/observability/routingdecision/{decision.pk}/change/")
    assert page.status_code == 200
    assert "<textarea" not in page.text and "<input type=\"text\"" not in page.text
    assert "3 models in the pool.\n2 passed the quality floor.</pre>" in page.text
    assert '{\n  &quot;model&quot;: &quot;m&quot;,\n  &quot;reasoning&quot;: &quot;cheapest of the two &lt;best&gt;&quot;\n}' in page.text
