from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from routing.services import catalog_load


class Command(BaseCommand):
    help = "Load the shipped catalog and evidence files (idempotent)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--catalog", default=str(settings.INFERBASE_CATALOG_PATH))
        parser.add_argument("--evidence", default=str(settings.INFERBASE_EVIDENCE_PATH))

    def handle(self, *args: Any, **options: Any) -> None:
        result = catalog_load(catalog_path=Path(options["catalog"]), evidence_path=Path(options["evidence"]))
        self.stdout.write(f"catalog {result.version}: {result.providers} providers, {result.models} models, {result.routes} routes")
