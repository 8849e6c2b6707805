"""Template context for portal pages: the viewer and the navigation."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from .navigation import navigation_for


def portal(request: HttpRequest) -> dict[str, Any]:
    """Add `viewer` and `navigation` on pages `portal_view` resolved a viewer for; nothing elsewhere."""
    viewer = getattr(request, "viewer", None)
    if viewer is None:
        return {}
    match = request.resolver_match
    view_name = match.view_name if match is not None else ""
    return {"viewer": viewer, "navigation": navigation_for(is_admin=viewer.is_admin, view_name=view_name)}
