from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from inferbase.accounts.services import api_key_create


class Command(BaseCommand):
    help = "Create an API key (and the organization and project if missing); prints the key alone on the last line."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--org", required=True)
        parser.add_argument("--project", required=True)
        parser.add_argument("--plan", choices=["free", "pro"], default=None)
        parser.add_argument("--policy", default=None, help="routing policy name (created if missing)")
        parser.add_argument("--name", default="")

    def handle(self, *args: Any, **options: Any) -> None:
        created = api_key_create(org_slug=options["org"], project_name=options["project"], plan=options["plan"],
                                 policy_name=options["policy"], name=options["name"])
        self.stderr.write(f"Created key {created.api_key.prefix}… for {options['org']}/{options['project']}; it is shown only once.")
        self.stdout.write(created.raw_key)
