"""/portal/: login, Observability › Logs (later pages add their routes here)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path

from . import login, logs
from .access import portal_view

app_name = "portal"


@portal_view()
def index_view(request: HttpRequest) -> HttpResponse:
    """GET /portal/: the first page every role may see."""
    return redirect("portal:logs")


urlpatterns = [
    path("", index_view, name="index"),
    path("login/", login.login_view, name="login"),
    path("logout/", login.logout_view, name="logout"),
    path("password/", login.password_change_view, name="password_change"),
    path("password/done/", login.password_change_done_view, name="password_change_done"),
    path("logs/", logs.logs_view, name="logs"),
    path("logs.csv", logs.logs_csv_view, name="logs_csv"),
    path("logs/<str:request_id>/", logs.log_detail_view, name="log_detail"),
]
