"""Every edit of routing data marks the snapshot stale in every process."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save

from .snapshot import snapshot_version_bump


def _bump(sender: Any, **kwargs: Any) -> None:
    snapshot_version_bump()


def connect_snapshot_signals(*models: Any) -> None:
    """Bump the snapshot version after any save or delete of these models."""
    for model in models:
        post_save.connect(_bump, sender=model, dispatch_uid=f"snapshot-save-{model._meta.label}")
        post_delete.connect(_bump, sender=model, dispatch_uid=f"snapshot-delete-{model._meta.label}")
