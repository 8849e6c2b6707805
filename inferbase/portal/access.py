"""Who may see a portal page: a logged-in member of an organization, with the role the page needs."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from inferbase.accounts.selectors import Viewer, viewer_get

View = Callable[..., HttpResponse]


def viewer_of(request: HttpRequest) -> Viewer:
    """Return the viewer `portal_view` resolved for this request."""
    return request.viewer  # type: ignore[attr-defined,no-any-return]


def portal_view(*, admin_only: bool = False) -> Callable[[View], View]:
    """Wrap a view: anonymous users go to the login page, a user of no organization gets a 403, and so does an
    analyst on an admin-only page. The view finds the viewer (organization and role) at `viewer_of(request)`."""

    def decorate(view: View) -> View:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            user = request.user
            if not user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            viewer = viewer_get(user_id=user.pk)
            if viewer is None:
                return _forbidden(request, "Your account belongs to no organization. Ask its admin to add you "
                                           "(manage.py create_portal_user).")
            if admin_only and not viewer.is_admin:
                return _forbidden(request, "This page is for your organization's admins.")
            request.viewer = viewer  # type: ignore[attr-defined]
            return view(request, *args, **kwargs)

        wrapped.portal_admin_only = admin_only  # type: ignore[attr-defined]  # read by the URL audit test
        return wrapped

    return decorate


def _forbidden(request: HttpRequest, message: str) -> HttpResponse:
    return render(request, "portal/forbidden.html", {"message": message}, status=403)
