"""The admin revokes API keys; it never adds one (the raw key is shown once, by create_api_key), un-revokes or deletes one."""

from __future__ import annotations

import pytest
from django.test import Client

from inferbase.accounts.models import ApiKey
from inferbase.accounts.services import api_key_create

pytestmark = pytest.mark.django_db


def test_an_api_key_is_revoked_never_added_unrevoked_or_deleted(admin_client: Client) -> None:
    created = api_key_create(org_slug="acme", project_name="web")
    key = created.api_key
    assert admin_client.get("/admin/accounts/apikey/add/").status_code == 403
    assert admin_client.post(f"/admin/accounts/apikey/{key.pk}/delete/", {"post": "yes"}).status_code == 403
    admin_client.post("/admin/accounts/apikey/", {"action": "revoke", "_selected_action": [key.pk]})
    revoked_at = ApiKey.objects.get(pk=key.pk).revoked_at
    assert revoked_at is not None
    form = {"project": key.project_id, "name": "renamed", "policy": "", "revoked_at_0": "", "revoked_at_1": ""}
    assert admin_client.post(f"/admin/accounts/apikey/{key.pk}/change/", form).status_code == 302
    key.refresh_from_db()
    assert key.name == "renamed" and key.revoked_at == revoked_at
