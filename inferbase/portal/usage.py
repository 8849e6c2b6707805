"""Usage: spend per day as an SVG chart, tables by model, project and key, and CSV export; from the same
rollups, selector and pending set as GET /usage (inferbase.gateway.pending.usage_reports: the rollups plus the
requests answered and not yet committed), for the viewer's organization only."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_safe

from billing.selectors import USAGE_COUNTS, USAGE_GROUPS, UsageReport
from inferbase.gateway.pending import usage_reports
from inferbase.gateway.state import state_of

from .access import portal_view, viewer_of
from .export import csv_cell
from .rows import Names, dollars, names_for

DEFAULT_DAYS = 30
MAX_DAYS = 366  # as GET /usage
NONE_LABEL = "(none)"


class DayField(forms.DateField):
    """A day written as YYYY-MM-DD exactly, as GET /usage takes it (strptime alone would take 2026-5-1)."""

    def to_python(self, value: Any) -> date | None:
        if isinstance(value, str) and value and len(value.strip()) != 10:
            raise forms.ValidationError(f"Enter a day as YYYY-MM-DD (got {value!r}).", code="invalid")
        return super().to_python(value)


class UsageRangeForm(forms.Form):
    """The date range of the query string: `from` and `to`, days inclusive (UTC)."""

    start = DayField(label="From", input_formats=["%Y-%m-%d"],
                            widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"))
    end = DayField(label="To", input_formats=["%Y-%m-%d"],
                          widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"))

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        start, end = data.get("start"), data.get("end")
        if start and end:
            if end < start:
                self.add_error("end", f"The end ({end}) is before the start ({start}).")
            elif (end - start).days >= MAX_DAYS:
                self.add_error("end", f"The range is longer than {MAX_DAYS} days.")
        return data


def usage_range(request: HttpRequest) -> tuple[UsageRangeForm, date, date]:
    """Return the range form over ?from=&to= and the range to show: the last 30 days when none or an invalid
    one is given (the form then carries its errors)."""
    today = timezone.now().date()
    default_start = today - timedelta(days=DEFAULT_DAYS - 1)
    given = "from" in request.GET or "to" in request.GET
    form = UsageRangeForm({"start": request.GET.get("from", default_start.isoformat()),
                           "end": request.GET.get("to", today.isoformat())})
    if form.is_valid():
        return form, form.cleaned_data["start"], form.cleaned_data["end"]
    if not given:
        form = UsageRangeForm({"start": default_start.isoformat(), "end": today.isoformat()})
        form.is_valid()
    return form, default_start, today


@dataclass(frozen=True, slots=True)
class Bar:
    day: str
    label: str  # shown under every few bars; "" elsewhere
    x: float
    y: float
    width: float
    height: float
    cost: str
    requests: int


@dataclass(frozen=True, slots=True)
class Chart:
    width: int
    height: int
    plot_top: int
    plot_bottom: int
    left: int
    bars: tuple[Bar, ...]
    top_label: str  # the axis' top: the largest day's spend
    empty: bool


CHART_WIDTH, CHART_HEIGHT, CHART_LEFT, CHART_TOP, CHART_BOTTOM = 960, 220, 90, 12, 190


def spend_chart(report: UsageReport) -> Chart:
    """Return the bars of spend per day from the start to the end of a by-day report (days without use at 0)."""
    per_day = {row["day"]: row for row in report.data}
    days = [report.start + timedelta(days=n) for n in range((report.end - report.start).days + 1)]
    most = max((per_day.get(d.isoformat(), {}).get("cost_micros", 0) for d in days), default=0)
    slot = (CHART_WIDTH - CHART_LEFT - 10) / len(days)
    every = max(1, len(days) // 10)  # at most about ten labels under the bars
    plot = CHART_BOTTOM - CHART_TOP
    bars = []
    for n, day in enumerate(days):
        row = per_day.get(day.isoformat(), {})
        cost = int(row.get("cost_micros", 0))
        height = plot * cost / most if most else 0.0
        if cost and height < 1:
            height = 1.0  # a day with any spend stays visible
        bars.append(Bar(day.isoformat(), day.strftime("%b %-d") if n % every == 0 else "",
                        round(CHART_LEFT + n * slot + slot * 0.1, 2), round(CHART_BOTTOM - height, 2),
                        round(max(slot * 0.8, 1.0), 2), round(height, 2), dollars(cost), int(row.get("requests", 0))))
    return Chart(CHART_WIDTH, CHART_HEIGHT, CHART_TOP, CHART_BOTTOM, CHART_LEFT, tuple(bars), dollars(most), most == 0)


def _label(group_by: str, value: Any, names: Names) -> str:
    if group_by == "model":
        return names.model(value) or NONE_LABEL
    if group_by == "project":
        return names.projects.get(value, f"project {value}") if value is not None else NONE_LABEL
    if group_by == "key":
        return names.keys.get(value, f"key {value}") if value is not None else NONE_LABEL
    return str(value)


def usage_rows(report: UsageReport, names: Names) -> list[dict[str, Any]]:
    """Return a report's rows with a name for each group, most spent first (by day: in day order)."""
    field = USAGE_GROUPS[report.group_by]
    rows = [{**row, "group": row[field], "name": _label(report.group_by, row[field], names),
             "cost": dollars(row["cost_micros"])} for row in report.data]
    if report.group_by != "day":
        rows.sort(key=lambda row: (-row["cost_micros"], row["name"]))
    return rows


@portal_view()
@require_safe
def usage_view(request: HttpRequest) -> HttpResponse:
    """GET /portal/usage/?from=YYYY-MM-DD&to=YYYY-MM-DD: the organization's spend per day, by model, project, key."""
    viewer = viewer_of(request)
    form, start, end = usage_range(request)
    names = names_for(organization_id=viewer.organization_id)
    reports = usage_reports(state_of(request).usage_pending, organization_id=viewer.organization_id, start=start,
                            end=end, group_bys=USAGE_GROUPS)
    totals = reports["day"].totals
    range_query = f"from={start.isoformat()}&to={end.isoformat()}"
    return render(request, "portal/usage/usage.html", {
        "form": form, "start": start, "end": end, "range_query": range_query,
        "chart": spend_chart(reports["day"]),
        "totals": {**totals, "cost": dollars(totals["cost_micros"])},
        "tables": [{"group_by": group, "title": title, "rows": usage_rows(reports[group], names)}
                   for group, title in (("model", "By model"), ("project", "By project"), ("key", "By key"))],
    })


CSV_COLUMNS = ("from", "to", "group_by", "group", "name", *USAGE_COUNTS, "cost_usd")


@portal_view()
@require_safe
def usage_csv_view(request: HttpRequest) -> HttpResponse:
    """GET /portal/usage.csv?from=&to=&group_by=day|model|project|key: the same figures as CSV."""
    viewer = viewer_of(request)
    form, start, end = usage_range(request)
    group_by = request.GET.get("group_by", "day")
    if form.errors or group_by not in USAGE_GROUPS:
        problem = "; ".join(f"{name}: {' '.join(errors)}" for name, errors in form.errors.items()) or (
            f"group_by must be one of {', '.join(USAGE_GROUPS)}")
        return HttpResponse(f"The request is not valid ({problem}).\n", status=400, content_type="text/plain")
    report = usage_reports(state_of(request).usage_pending, organization_id=viewer.organization_id, start=start,
                           end=end, group_bys=[group_by])[group_by]
    names = names_for(organization_id=viewer.organization_id)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for row in usage_rows(report, names):
        group = "" if row["group"] is None else row["group"]
        writer.writerow([start.isoformat(), end.isoformat(), group_by, group, csv_cell(row["name"]),
                         *(row[count] for count in USAGE_COUNTS), row["cost"].lstrip("$").replace(",", "")])
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = (f'attachment; filename="inferbase-usage-{viewer.organization_slug}-'
                                       f'{group_by}-{start.isoformat()}-{end.isoformat()}.csv"')
    response["Cache-Control"] = "no-store"
    return response
