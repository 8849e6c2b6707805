"""Keyset pagination over (created_at, id), newest first: a page is an index range, at any depth."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db.models import Q, QuerySet

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
ONE_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class Cursor:
    """The last row of a page; the next page starts just after it."""

    created_at: datetime
    id: int

    def encode(self) -> str:
        return f"{(self.created_at - EPOCH) // ONE_MICROSECOND}.{self.id}"


def cursor_decode(raw: str | None) -> Cursor | None:
    """Return the cursor a page link carries, or None for a missing or malformed one (the first page)."""
    if not raw:
        return None
    micros, _, row_id = raw.partition(".")
    try:
        return Cursor(EPOCH + timedelta(microseconds=int(micros)), int(row_id))
    except (ValueError, OverflowError):
        return None


def newest_first(queryset: QuerySet, cursor: Cursor | None) -> QuerySet:
    """Order newest first and start after the cursor. The `created_at <=` bound lets the index scan begin at the
    cursor; the OR only breaks ties within one timestamp."""
    queryset = queryset.order_by("-created_at", "-id")
    if cursor is None:
        return queryset
    return queryset.filter(created_at__lte=cursor.created_at).filter(
        Q(created_at__lt=cursor.created_at) | Q(id__lt=cursor.id))
