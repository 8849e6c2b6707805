"""Reads of the catalog for pages that show it (the request path reads the snapshot instead)."""

from __future__ import annotations

from .models import Model


def model_names() -> dict[str, str]:
    """Return every catalog model, catalog id -> its name."""
    return dict(Model.objects.values_list("catalog_id", "name"))
