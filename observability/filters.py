"""The one FilterSet of Logs: the page, its CSV export (and any API listing) read filters through it alone."""

from __future__ import annotations

from typing import Any

import django_filters
from django import forms
from django.db.models import QuerySet
from django.forms.utils import flatatt
from django.utils.html import format_html, format_html_join

from routing.decision import COMPLEXITIES, TASKS

from .models import RequestLog

# How a request ended (RequestLog.final_disposition), as the gateway writes it.
DISPOSITIONS: tuple[str, ...] = (
    "served", "rejected", "not_routed", "upstream_rejected", "upstream_error", "upstream_timeout",
    "upstream_unavailable", "failed_mid_stream", "client_disconnected", "internal_error",
)
ANY = "Any"


def _choices(values: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(value, value.replace("_", " ")) for value in values]


class _DateTimeLocal(forms.DateTimeInput):
    input_type = "datetime-local"

    def __init__(self) -> None:
        super().__init__(format="%Y-%m-%dT%H:%M")


class _Select(forms.Select):
    """A select rendered in Python: through the template renderer each option cost about 0.2 ms, and the
    filters offer a hundred or more (every key and model)."""

    def render(self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None) -> str:
        widget = self.get_context(name, value, attrs)["widget"]
        options = format_html_join("", '<option value="{}"{}>{}</option>', (
            (option["value"], " selected" if option["selected"] else "", option["label"])
            for _, group, _ in widget["optgroups"] for option in group))
        return format_html('<select name="{}"{}>{}</select>', name, flatatt(widget["attrs"]), options)


class _IntegerFilter(django_filters.NumberFilter):
    field_class = forms.IntegerField


class RequestLogFilter(django_filters.FilterSet):
    """Filters from the query string. Project, key and model choices are the viewer's organization's own, so a
    value from another organization is invalid, never applied; an invalid filter set matches no rows."""

    q = django_filters.CharFilter(method="search_request_id", label="Request id")
    since = django_filters.DateTimeFilter(field_name="created_at", lookup_expr="gte", label="From (UTC)",
                                          widget=_DateTimeLocal())
    until = django_filters.DateTimeFilter(field_name="created_at", lookup_expr="lte", label="To (UTC)",
                                          widget=_DateTimeLocal())
    project = django_filters.ChoiceFilter(field_name="project_id", empty_label=ANY, label="Project", widget=_Select)
    key = django_filters.ChoiceFilter(field_name="api_key_id", empty_label=ANY, label="Key", widget=_Select)
    model = django_filters.ChoiceFilter(field_name="model_served", empty_label=ANY, label="Served model",
                                        widget=_Select)
    task = django_filters.ChoiceFilter(choices=_choices(TASKS), empty_label=ANY, widget=_Select)
    complexity = django_filters.ChoiceFilter(choices=_choices(COMPLEXITIES), empty_label=ANY, widget=_Select)
    disposition = django_filters.ChoiceFilter(field_name="final_disposition", choices=_choices(DISPOSITIONS),
                                              label="Disposition", empty_label=ANY, widget=_Select)
    status = _IntegerFilter(field_name="status_code", label="Status", min_value=100, max_value=599)
    streamed = django_filters.BooleanFilter(field_name="stream", label="Streamed", widget=_Select(
        choices=[("", ANY), ("true", "yes"), ("false", "no")]))
    thinking = django_filters.ChoiceFilter(choices=[("on", "on"), ("off", "off")], empty_label=ANY, widget=_Select)

    class Meta:
        model = RequestLog
        fields: list[str] = []

    def __init__(self, data: Any = None, *, projects: dict[int, str], keys: dict[int, str],
                 models: dict[str, str], **kwargs: Any) -> None:
        super().__init__(data, queryset=RequestLog.objects.none(), **kwargs)
        self.filters["project"].extra["choices"] = [(str(pk), name) for pk, name in projects.items()]
        self.filters["key"].extra["choices"] = [(str(pk), label) for pk, label in keys.items()]
        self.filters["model"].extra["choices"] = sorted(models.items(), key=lambda item: item[1].lower())

    def search_request_id(self, queryset: QuerySet[RequestLog], name: str, value: str) -> QuerySet[RequestLog]:
        """Match a whole request id or its beginning ("req-" may be left off); the request_id index serves both."""
        value = value.strip().lower()
        if not value:
            return queryset
        if not value.startswith("req-"):
            value = "req-" + value
        return queryset.filter(request_id__startswith=value)

    def active(self) -> dict[str, Any]:
        """Return the filters in force (valid and not empty), by name."""
        if not self.is_valid():
            return {}
        return {name: value for name, value in self.form.cleaned_data.items() if value not in (None, "")}

    def apply(self, queryset: QuerySet[RequestLog]) -> QuerySet[RequestLog]:
        """Return the queryset narrowed by the filters; nothing at all when any filter is invalid."""
        if self.is_bound and not self.is_valid():
            return queryset.none()
        return self.filter_queryset(queryset) if self.is_bound else queryset
