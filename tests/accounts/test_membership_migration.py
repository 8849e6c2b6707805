"""Migration 0003: each former organization member becomes a member of its first organization, as an analyst.

Run in its own process on its own SQLite file: migrating the shared test database backwards and forwards
disturbed later tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.live import REPO

SCRIPT = """
from django.core.management import call_command
from django.db import connection
from django.db.migrations.loader import MigrationLoader

old = MigrationLoader(connection).project_state(("accounts", "0002_initial")).apps
ada = old.get_model("auth", "User").objects.create(username="ada")
first = old.get_model("accounts", "Organization").objects.create(slug="first", name="First")
second = old.get_model("accounts", "Organization").objects.create(slug="second", name="Second")
first.members.add(ada)
second.members.add(ada)
call_command("migrate", verbosity=0)
from inferbase.accounts.models import Membership
membership = Membership.objects.get(user__username="ada")
print(membership.organization.slug, membership.role)
"""


def test_members_become_analyst_memberships(tmp_path: Path) -> None:
    env = {"SQLITE_PATH": str(tmp_path / "db.sqlite3"), "INFERBASE_CACHE_DIR": str(tmp_path / "cache"),
           "PATH": "/usr/bin:/bin"}

    def manage(*args: str) -> str:
        result = subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True,
                                text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stdout

    manage("migrate", "accounts", "0002_initial", "-v", "0")
    assert manage("shell", "--no-imports", "-c", SCRIPT).strip().splitlines()[-1] == "first analyst"
