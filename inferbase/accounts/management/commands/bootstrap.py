from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from inferbase.accounts.models import ApiKey
from inferbase.accounts.services import api_key_create, api_key_hash


class Command(BaseCommand):
    help = "Migrate, load the catalog and make sure a demo key exists (idempotent). Used by `make run`."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--key-file", default=str(settings.BASE_DIR / "var" / "demo-api-key"))

    def handle(self, *args: Any, **options: Any) -> None:
        call_command("migrate", verbosity=0, interactive=False)
        call_command("load_catalog", stdout=self.stdout)
        key_file = Path(options["key_file"])
        raw = key_file.read_text().strip() if key_file.exists() else ""
        if raw and ApiKey.objects.filter(key_hash=api_key_hash(raw), revoked_at__isnull=True).exists():
            self.stdout.write(f"Demo API key (reused, from {key_file}):\n{raw}")
            return
        created = api_key_create(org_slug="demo", project_name="default", name="demo")
        key_file.parent.mkdir(parents=True, exist_ok=True)
        key_file.write_text(created.raw_key + "\n")
        os.chmod(key_file, 0o600)
        self.stdout.write(f"Demo API key (new, saved to {key_file}):\n{created.raw_key}")
