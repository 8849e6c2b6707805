"""Billing › Budgets and limits: per organization, project and key, a monthly spend budget with its alert
threshold and requests/tokens-per-minute limits. Everyone reads; admins set them."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_safe

from billing.models import Scope
from billing.selectors import ScopeSettings, scope_settings_get, usage_report
from billing.services import scope_settings_save
from inferbase.accounts.selectors import Viewer, api_key_labels, project_names

from .access import portal_view, viewer_of
from .rows import dollars

MICROS_PER_DOLLAR = 1_000_000
MAX_BUDGET_DOLLARS = Decimal("1000000000")  # a billion a month: anything above is a typo


@dataclass(frozen=True, slots=True)
class ScopeLine:
    """One scope's row on the page: what is set, and this month's spend against its budget."""

    scope: str
    scope_id: int
    name: str
    settings: ScopeSettings
    spent_micros: int
    spent: str
    budget: str
    percent: float | None  # spent / budget, in percent (None: no budget)
    bar_percent: float  # the bar's fill, at most 100
    alert: bool  # at or past the alert threshold
    over: bool

    @property
    def edit_args(self) -> tuple[str, int]:
        return (self.scope, self.scope_id)


def organization_scopes(viewer: Viewer) -> list[tuple[str, int, str]]:
    """Return the viewer's organization, its projects and its keys as (scope, id, name)."""
    org = viewer.organization_id
    return ([(Scope.ORGANIZATION.value, org, viewer.organization_name)]
            + [(Scope.PROJECT.value, pid, name) for pid, name in project_names(organization_id=org).items()]
            + [(Scope.KEY.value, kid, label) for kid, label in api_key_labels(organization_id=org).items()])


def month_spend(*, organization_id: int) -> dict[tuple[str, int], int]:
    """Return this calendar month's (UTC) spend so far for the organization and each of its projects and keys."""
    today = timezone.now().date()
    start = today.replace(day=1)
    spend = {}
    for group, scope in (("project", Scope.PROJECT.value), ("key", Scope.KEY.value)):
        field = "project_id" if group == "project" else "api_key_id"
        report = usage_report(organization_id=organization_id, start=start, end=today, group_by=group)
        spend.update({(scope, row[field]): row["cost_micros"] for row in report.data if row[field] is not None})
        spend[(Scope.ORGANIZATION.value, organization_id)] = report.totals["cost_micros"]
    return spend


def scope_line(scope: str, scope_id: int, name: str, settings: ScopeSettings, spent: int) -> ScopeLine:
    """Return a scope's row, with its share of budget spent and whether the alert threshold is reached."""
    budget = settings.monthly_micros
    percent = None if budget is None else (100.0 * spent / budget if budget else (100.0 if spent else 0.0))
    return ScopeLine(scope, scope_id, name, settings, spent, dollars(spent), dollars(budget) if budget is not None else "",
                     None if percent is None else round(percent, 1), min(percent or 0.0, 100.0),
                     percent is not None and percent >= settings.alert_percent, percent is not None and percent >= 100)


@portal_view()
@require_safe
def budgets_view(request: HttpRequest) -> HttpResponse:
    """GET /portal/budgets/: each scope's budget, spend this month against it, and its rate limits."""
    viewer = viewer_of(request)
    scopes = organization_scopes(viewer)
    settings = scope_settings_get(scopes=[(scope, scope_id) for scope, scope_id, _ in scopes])
    spend = month_spend(organization_id=viewer.organization_id)
    lines = [scope_line(scope, scope_id, name, settings[(scope, scope_id)], spend.get((scope, scope_id), 0))
             for scope, scope_id, name in scopes]
    today = timezone.now().date()
    return render(request, "portal/budgets/list.html", {
        "groups": [(title, [line for line in lines if line.scope == scope]) for scope, title in
                   ((Scope.ORGANIZATION.value, "Organization"), (Scope.PROJECT.value, "Projects"), (Scope.KEY.value, "API keys"))],
        "month": today.replace(day=1),
        "saved": request.GET.get("saved", ""),
        "today": today,
    })


class ScopeSettingsForm(forms.Form):
    """A scope's budget (dollars, to the micro-dollar) and limits; blank means none."""

    monthly_budget = forms.DecimalField(
        label="Monthly budget (USD)", required=False, min_value=0, max_value=MAX_BUDGET_DOLLARS, decimal_places=6,
        help_text="Spend per calendar month (UTC). Leave empty for no budget.",
        error_messages={"invalid": "Enter an amount in dollars, such as 50 or 12.50.",
                        "min_value": "A budget cannot be negative.",
                        "max_value": "A budget above a billion dollars a month is surely a typo.",
                        "max_decimal_places": "Dollars go to the micro-dollar at most: six decimals."})
    alert_percent = forms.IntegerField(
        label="Alert at (% of the budget)", min_value=1, max_value=100, initial=80,
        help_text="The page and the response headers warn from this share spent.",
        error_messages={"required": "Give the share of the budget at which to warn (80 is usual).",
                        "invalid": "Enter a whole percentage, from 1 to 100.",
                        "min_value": "The alert threshold is at least 1%%.",
                        "max_value": "The alert threshold is at most 100%%."})
    requests_per_minute = forms.IntegerField(
        label="Requests per minute", required=False, min_value=1,
        help_text="Leave empty for no limit.",
        error_messages={"invalid": "Enter a whole number of requests.",
                        "min_value": "A limit allows at least 1 request a minute; leave it empty for no limit."})
    tokens_per_minute = forms.IntegerField(
        label="Tokens per minute", required=False, min_value=1, max_value=2**62,
        help_text="Prompt plus max_tokens of each request. Leave empty for no limit.",
        error_messages={"invalid": "Enter a whole number of tokens.",
                        "min_value": "A limit allows at least 1 token a minute; leave it empty for no limit.",
                        "max_value": "That limit is too large to store."})

    def monthly_micros(self) -> int | None:
        """Return the budget in micro-dollars, exactly (None: no budget)."""
        value = self.cleaned_data.get("monthly_budget")
        return None if value is None else int(value * MICROS_PER_DOLLAR)


def _initial(settings: ScopeSettings) -> dict[str, Any]:
    budget = None
    if settings.monthly_micros is not None:
        budget = (Decimal(settings.monthly_micros) / MICROS_PER_DOLLAR).normalize()
        budget = budget.quantize(Decimal(1)) if budget == budget.to_integral() else budget
    return {"monthly_budget": budget, "alert_percent": settings.alert_percent,
            "requests_per_minute": settings.requests_per_minute, "tokens_per_minute": settings.tokens_per_minute}


@portal_view(admin_only=True)
@require_http_methods(["GET", "HEAD", "POST"])
def budget_edit_view(request: HttpRequest, scope: str, scope_id: int) -> HttpResponse:
    """GET/POST /portal/budgets/<scope>/<id>/: set a scope's budget and limits; another organization's is a 404."""
    viewer = viewer_of(request)
    found = [entry for entry in organization_scopes(viewer) if entry[0] == scope and entry[1] == scope_id]
    if not found:
        return render(request, "portal/not_found.html", {"what": f"No {scope} {scope_id} in your organization."},
                      status=404)
    name = found[0][2]
    current = scope_settings_get(scopes=[(scope, scope_id)])[(scope, scope_id)]
    if request.method == "POST":
        form = ScopeSettingsForm(request.POST)
        if form.is_valid():
            scope_settings_save(scope=scope, scope_id=scope_id, monthly_micros=form.monthly_micros(),
                                alert_percent=form.cleaned_data["alert_percent"],
                                requests_per_minute=form.cleaned_data["requests_per_minute"],
                                tokens_per_minute=form.cleaned_data["tokens_per_minute"])
            return redirect(f"{reverse('portal:budgets')}?saved={scope}-{scope_id}#{scope}-{scope_id}")
    else:
        form = ScopeSettingsForm(initial=_initial(current))
    return render(request, "portal/budgets/edit.html", {"form": form, "scope": scope, "scope_id": scope_id, "name": name})
