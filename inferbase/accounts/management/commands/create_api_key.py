from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from inferbase.accounts.errors import UnknownPolicyError
from inferbase.accounts.models import ApiKey
from inferbase.accounts.services import CreatedKey, api_key_create


class Command(BaseCommand):
    help = ("Create an API key (and the organization and project if missing). The organization's plan and the "
            "key's policy go to stderr; the key goes to stdout alone, on the last line, so KEY=$(...) captures it.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--org", required=True)
        parser.add_argument("--project", required=True)
        parser.add_argument("--plan", choices=["free", "pro"], default=None,
                            help="a new organization's plan (default pro); given, it changes an existing one's")
        parser.add_argument("--policy", default=None,
                            help="the routing policy the key runs under: the organization's own or a shared one "
                                 "(an unknown name is an error that lists them)")
        parser.add_argument("--create-policy", action="store_true",
                            help="create --policy with the default settings when the organization has none by that name")
        parser.add_argument("--name", default="")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["create_policy"] and not options["policy"]:
            raise CommandError("--create-policy needs --policy NAME.")
        try:
            created = api_key_create(org_slug=options["org"], project_name=options["project"], plan=options["plan"],
                                     policy_name=options["policy"], create_policy=options["create_policy"],
                                     name=options["name"])
        except UnknownPolicyError as exc:
            raise CommandError(f"{exc} Nothing was created; create it with --create-policy, or in the admin.") from exc
        self.stderr.write(_summary(created))
        self.stdout.write(created.raw_key)


def _summary(created: CreatedKey) -> str:
    key: ApiKey = created.api_key
    org = key.project.organization
    if org.plan == "free":
        plan = "plan free: every request costs 0"
    else:
        plan = f"plan {org.plan}: list price plus a {org.markup_bps / 100:g}% markup"
    if created.previous_plan:
        plan += f" (changed from {created.previous_plan})"
    policy = f"policy {key.policy.name}" if key.policy else "no policy of its own (the project's, the organization's or Inferbase's applies)"
    return f"Created key {key.prefix}… for {org.slug}/{key.project.name}; {plan}; {policy}. The key is shown only once:"
