"""/portal/: login, Observability › Logs (later pages add their routes here)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import path

from . import budgets, keys, login, logs, model_page, policies, usage
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
    path("policies/", policies.policies_view, name="policies"),
    path("policies/new/", policies.policy_new_view, name="policy_new"),
    path("policies/<int:policy_id>/", policies.policy_detail_view, name="policy_detail"),
    path("policies/<int:policy_id>/edit/", policies.policy_edit_view, name="policy_edit"),
    path("policies/<int:policy_id>/versions/<int:number>/restore/", policies.policy_restore_view,
         name="policy_restore"),
    path("keys/", keys.keys_view, name="keys"),
    path("keys/new/", keys.key_create_view, name="key_create"),
    path("keys/<int:key_id>/", keys.key_edit_view, name="key_edit"),
    path("keys/<int:key_id>/revoke/", keys.key_revoke_view, name="key_revoke"),
    path("provider-keys/new/", keys.provider_key_create_view, name="provider_key_create"),
    path("usage/", usage.usage_view, name="usage"),
    path("usage.csv", usage.usage_csv_view, name="usage_csv"),
    path("models/<str:model_id>/", model_page.model_view, name="model"),
    path("budgets/", budgets.budgets_view, name="budgets"),
    path("budgets/<str:scope>/<int:scope_id>/", budgets.budget_edit_view, name="budget_edit"),
]
