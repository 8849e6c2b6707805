"""manage.py create_portal_user: one user, one organization, one role."""

from __future__ import annotations

import subprocess
import sys
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from inferbase.accounts.models import Membership, Organization
from tests.live import REPO

pytestmark = pytest.mark.django_db


def test_create_portal_user_creates_a_member_with_the_role(acme: Organization) -> None:
    out = StringIO()
    call_command("create_portal_user", "--org", "acme", "--role", "admin", "--username", "ada",
                 "--password", "pw-123456", "--email", "ada@example.com", stdout=out)
    user = User.objects.get(username="ada")
    assert user.email == "ada@example.com" and user.check_password("pw-123456")
    assert (user.membership.organization, user.membership.role) == (acme, Membership.Role.ADMIN)
    assert "ada" in out.getvalue()


def test_create_portal_user_refuses_an_unknown_role(acme: Organization) -> None:
    with pytest.raises(CommandError, match="Unknown role 'owner': choose one of admin, analyst"):
        call_command("create_portal_user", "--org", "acme", "--role", "owner", "--username", "ada", "--password", "pw")
    assert not User.objects.filter(username="ada").exists()


def test_create_portal_user_refuses_an_unknown_organization_and_lists_them(acme: Organization) -> None:
    with pytest.raises(CommandError, match="No organization 'acne'. Existing organizations: acme"):
        call_command("create_portal_user", "--org", "acne", "--role", "analyst", "--username", "ada", "--password", "pw")
    assert not User.objects.filter(username="ada").exists()


def test_create_portal_user_creates_the_organization_when_asked(db: None) -> None:
    call_command("create_portal_user", "--org", "initech", "--role", "analyst", "--username", "bob", "--password", "pw",
                 "--create-org", stdout=StringIO())
    assert User.objects.get(username="bob").membership.organization == Organization.objects.get(slug="initech")


def test_create_portal_user_refuses_a_taken_username(acme: Organization) -> None:
    User.objects.create_user("ada")
    with pytest.raises(CommandError, match="A user named 'ada' already exists"):
        call_command("create_portal_user", "--org", "acme", "--role", "admin", "--username", "ada", "--password", "pw")


def test_create_portal_user_exits_non_zero_with_the_message(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The role is checked before the database is touched, so an empty SQLite file will do.
    env = {"SQLITE_PATH": str(tmp_path / "db.sqlite3"), "INFERBASE_CACHE_DIR": str(tmp_path / "cache"),
           "PATH": "/usr/bin:/bin"}
    bad = subprocess.run([sys.executable, "manage.py", "create_portal_user", "--org", "acme", "--role", "boss",
                          "--username", "bo", "--password", "pw"], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 1 and "Unknown role 'boss': choose one of admin, analyst." in bad.stderr
