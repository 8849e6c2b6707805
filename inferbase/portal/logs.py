"""Observability › Logs: the list, its CSV export, and one request's routing decision."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_safe

from inferbase.accounts.selectors import Viewer
from observability.filters import RequestLogFilter
from observability.keyset import cursor_decode
from observability.selectors import request_log_export, request_log_get, request_log_list

from .access import portal_view, viewer_of
from .decision import decision_page
from .export import csv_chunks, csv_response
from .rows import Names, log_row, names_for

PAGE_SIZE = 50
PAGE_PARAM = "after"


def _filters(request: HttpRequest) -> tuple[Viewer, Names, RequestLogFilter]:
    """Return the viewer, the names its pages show, and the query string's filters over its choices."""
    viewer = viewer_of(request)
    names = names_for(organization_id=viewer.organization_id)
    return viewer, names, RequestLogFilter(request.GET, projects=names.projects, keys=names.keys, models=names.models)


def _query_without(request: HttpRequest, *names: str) -> str:
    query = request.GET.copy()
    for name in names:
        query.pop(name, None)
    return query.urlencode()


@portal_view()
@require_safe
def logs_view(request: HttpRequest) -> HttpResponse:
    """GET /portal/logs/: the organization's requests, newest first, filtered by the query string."""
    viewer, names, filters = _filters(request)
    cursor = cursor_decode(request.GET.get(PAGE_PARAM))
    page = request_log_list(organization_id=viewer.organization_id, filters=filters, cursor=cursor, limit=PAGE_SIZE)
    query = _query_without(request, PAGE_PARAM)
    next_query = None
    if page.next_cursor is not None:
        next_params = request.GET.copy()
        next_params[PAGE_PARAM] = page.next_cursor.encode()
        next_query = next_params.urlencode()
    return render(request, "portal/logs/list.html", {
        "filters": filters,
        "active": filters.active(),
        "rows": [log_row(values, names) for values in page.rows],
        "query": query,
        "next_query": next_query,
        "paged": cursor is not None,
    })


@portal_view()
@require_safe
def logs_csv_view(request: HttpRequest) -> HttpResponse:
    """GET /portal/logs.csv: the same filtered list, every row, streamed as CSV."""
    viewer, names, filters = _filters(request)
    if not filters.is_valid():
        problems = "; ".join(f"{name}: {' '.join(errors)}" for name, errors in filters.errors.items())
        return HttpResponse(f"The filters are not valid ({problems}).\n", status=400, content_type="text/plain")
    rows = request_log_export(organization_id=viewer.organization_id, filters=filters)
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    return csv_response(request, csv_chunks(rows, names), filename=f"inferbase-logs-{viewer.organization_slug}-{stamp}.csv")


@portal_view()
@require_safe
def log_detail_view(request: HttpRequest, request_id: str) -> HttpResponse:
    """GET /portal/logs/<request_id>/: the request and its routing decision; another organization's is a 404."""
    viewer = viewer_of(request)
    record = request_log_get(organization_id=viewer.organization_id, request_id=request_id)
    if record is None:
        return render(request, "portal/not_found.html", {"what": f"No request {request_id} in your organization's logs."},
                      status=404)
    names = names_for(organization_id=viewer.organization_id)
    return render(request, "portal/logs/detail.html", {"page": decision_page(record, names)})
