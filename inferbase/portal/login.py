"""Login, logout and password change: Django's auth views with our templates, and failed logins throttled."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.urls import reverse_lazy

from .access import portal_view
from .throttle import client_address, login_blocked, login_failed, login_succeeded


def _too_many_message() -> str:
    minutes = max(1, round(settings.INFERBASE_LOGIN_FAILURE_WINDOW_SECONDS / 60))
    return (f"Too many failed logins for this username or from this address. "
            f"Try again in {minutes} minute{'s' if minutes != 1 else ''}.")


class PortalAuthenticationForm(AuthenticationForm):
    """Django's login form, refusing to check passwords once the failures allowed are used up."""

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username") or ""
        address = client_address(self.request)
        if login_blocked(username=username, address=address):
            raise ValidationError(_too_many_message(), code="too_many_failures")
        try:
            cleaned = super().clean()
        except ValidationError:
            login_failed(username=username, address=address)
            raise
        login_succeeded(username=username)
        return cleaned


login_view = auth_views.LoginView.as_view(
    template_name="portal/login.html", authentication_form=PortalAuthenticationForm, redirect_authenticated_user=True,
)
logout_view = auth_views.LogoutView.as_view()  # POST only (Django 5), from the form in the header
password_change_view = portal_view()(auth_views.PasswordChangeView.as_view(
    template_name="portal/password_change.html", success_url=reverse_lazy("portal:password_change_done"),
))
password_change_done_view = portal_view()(auth_views.PasswordChangeDoneView.as_view(
    template_name="portal/password_change_done.html",
))
