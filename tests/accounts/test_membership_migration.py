"""Migration 0003: each former organization member becomes a member of its first organization, as an analyst."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


@pytest.mark.django_db(transaction=True)
def test_members_become_analyst_memberships() -> None:
    executor = MigrationExecutor(connection)
    before = [("accounts", "0002_initial")]
    after = [("accounts", "0003_membership")]
    executor.migrate(before)
    try:
        apps = executor.loader.project_state(before).apps
        user_model = apps.get_model("auth", "User")
        org_model = apps.get_model("accounts", "Organization")
        ada = user_model.objects.create(username="ada")
        first = org_model.objects.create(slug="first", name="First")
        second = org_model.objects.create(slug="second", name="Second")
        first.members.add(ada)
        second.members.add(ada)
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(after)
        apps = executor.loader.project_state(after).apps
        membership = apps.get_model("accounts", "Membership").objects.get(user_id=ada.pk)
        assert (membership.organization_id, membership.role) == (first.pk, "analyst")
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
