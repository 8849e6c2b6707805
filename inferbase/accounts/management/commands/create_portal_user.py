from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from inferbase.accounts.errors import PortalUserError
from inferbase.accounts.models import Membership
from inferbase.accounts.services import portal_user_create


class Command(BaseCommand):
    help = ("Create a portal user (/portal/) of an organization, as an admin (everything) or an analyst "
            "(reads Logs). An unknown role or organization is an error and creates nothing.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--org", required=True, help="the organization's slug")
        # Not argparse choices: the service's message names the valid roles the same way for every caller.
        parser.add_argument("--role", required=True, help=f"one of {', '.join(Membership.Role.values)}")
        parser.add_argument("--username", required=True)
        parser.add_argument("--password", required=True)
        parser.add_argument("--email", default="")
        parser.add_argument("--create-org", action="store_true", help="create the organization when it is missing")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            user = portal_user_create(org_slug=options["org"], role=options["role"], username=options["username"],
                                      password=options["password"], email=options["email"],
                                      create_org=options["create_org"])
        except PortalUserError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Created portal user {user.get_username()}, {options['role']} of {options['org']}; "
                          "log in at /portal/login/.")
