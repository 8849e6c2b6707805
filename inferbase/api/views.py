"""The API beside chat completions: models, model health, routing decisions, usage."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime, timedelta
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from billing.selectors import USAGE_GROUPS
from inferbase.accounts.selectors import KeyInfo, user_organization_ids
from inferbase.accounts.services import api_key_hash
from inferbase.gateway.decisions import decision_find
from inferbase.gateway.errors import ApiError, ErrorType, error_envelope
from inferbase.gateway.pending import usage_reports
from inferbase.gateway.state import AppState, state_of
from providers.health import ProbeTarget, probe
from providers.selectors import provider_health_latest
from providers.services import provider_health_record
from routing.catalog import model_list, model_servable_routes
from routing.decision import AUTO_MODEL_NAMES
from routing.selectors import model_evidence

from .auth import bearer_key, key_usable
from .openapi import openapi_document


def _error(exc: ApiError) -> JsonResponse:
    return JsonResponse(exc.envelope(), status=exc.status)


async def _optional_key(request: HttpRequest) -> KeyInfo | None:
    raw = bearer_key(request.headers.get("Authorization", ""))
    if raw is None:
        return None
    return key_usable(await state_of(request).key_cache.get(api_key_hash(raw)))


@require_GET
async def openapi_view(request: HttpRequest) -> JsonResponse:
    """GET /openapi.json: the API described as OpenAPI 3.1."""
    return JsonResponse(openapi_document())


# created: OpenAI's model object has one; 0 says no date applies (auto is not a model release).
AUTO_ENTRY = {"id": "auto", "object": "model", "created": 0, "owned_by": "inferbase",
              "name": "Inferbase Auto - Smart Routing"}


async def _model_entries(request: HttpRequest) -> list[dict[str, Any]]:
    """Return the model-list entries the caller may see: auto, then the catalog (narrowed by the key's
    policy when it requires pinned models to be in its pool); raise ApiError for a bad key."""
    key = await _optional_key(request)
    snapshot = await state_of(request).snapshot_holder.get()
    policy = None
    project_id = None
    if key is not None:
        project_id = key.project_id
        policy = snapshot.policy_for(key_policy_id=key.policy_id, project_id=key.project_id,
                                     organization_id=key.organization_id)
    return [AUTO_ENTRY, *model_list(snapshot, policy=policy, project_id=project_id)]


@require_GET
async def models_view(request: HttpRequest) -> JsonResponse:
    """GET /models: auto first, then the catalog (narrowed by the key's policy when it requires it)."""
    try:
        data = await _model_entries(request)
    except ApiError as exc:
        return _error(exc)
    return JsonResponse({"object": "list", "data": data})


@require_GET
async def model_retrieve_view(request: HttpRequest, model_id: str) -> JsonResponse:
    """GET /models/{id}: OpenAI's retrieve-model shape for one entry of GET /models (404 otherwise)."""
    try:
        entries = await _model_entries(request)
    except ApiError as exc:
        return _error(exc)
    wanted = "auto" if model_id in AUTO_MODEL_NAMES else model_id
    for entry in entries:
        if entry["id"] == wanted:
            if wanted == "auto":
                return JsonResponse(entry)
            return JsonResponse({**entry, "evidence": await _evidence(request, wanted)})
    return _error(ApiError(404, f"The model '{model_id}' does not exist or you do not have access to it.",
                           code="model_not_found", param="model_id"))


async def _evidence(request: HttpRequest, model_id: str) -> dict[str, Any]:
    """Return the model's evidence block, over the routes the caller could be served by."""
    key = await _optional_key(request)
    snapshot = await state_of(request).snapshot_holder.get()
    routes = [(route.route_id, route.provider)
              for route, _ in model_servable_routes(snapshot, model_id, key.project_id if key else None)]
    return await database_sync_to_async(model_evidence)(model_id=model_id, routes=routes)


@require_GET
async def model_health_view(request: HttpRequest, model_id: str) -> JsonResponse:
    """GET /models/{id}/health: the latest scheduled probe of the providers serving the model.

    Calling it makes no upstream call, except when a provider has no probe yet or its latest is stale
    (no scheduler running): then one probe, shared by every caller of this process, refreshes it."""
    state = state_of(request)
    snapshot = await state.snapshot_holder.get()
    if model_id in AUTO_MODEL_NAMES:
        return JsonResponse({"model": model_id, "status": "ready"})
    if model_id not in snapshot.models:
        return _error(ApiError(404, f"The model '{model_id}' does not exist.", code="model_not_found", param="model_id"))
    routes = model_servable_routes(snapshot, model_id)
    if not routes:
        return JsonResponse({"model": model_id, "status": "unavailable"})
    targets = {route.provider: ProbeTarget(route.provider, route.base_url, route.dialect, key) for route, key in routes}
    latest = await _latest_probes(state, list(targets.values()))
    status = "ready" if any(latest.get(slug) == "ready" for slug in targets) else "loading"
    return JsonResponse({"model": model_id, "status": status})


async def _latest_probes(state: AppState, targets: list[ProbeTarget]) -> dict[str, str]:
    """Return provider -> status of its latest probe, probing (once per process at a time) the providers
    whose latest probe is missing or older than twice the probe interval."""
    slugs = [t.provider for t in targets]
    latest = await database_sync_to_async(provider_health_latest)(slugs=slugs)
    if not _stale(targets, latest):
        return {slug: status for slug, (status, _) in latest.items()}
    async with state.probe_lock():
        latest = await database_sync_to_async(provider_health_latest)(slugs=slugs)
        stale = _stale(targets, latest)
        if stale:
            timeout = float(settings.INFERBASE_HEALTH_PROBE_TIMEOUT_SECONDS)
            client = state.upstream.client()
            results = await asyncio.gather(*(probe(client, target, timeout) for target in stale))
            await database_sync_to_async(provider_health_record)(list(results))
            latest = await database_sync_to_async(provider_health_latest)(slugs=slugs)
    return {slug: status for slug, (status, _) in latest.items()}


def _stale(targets: list[ProbeTarget], latest: dict[str, tuple[str, datetime]]) -> list[ProbeTarget]:
    horizon = datetime.now(UTC) - timedelta(seconds=2 * float(settings.INFERBASE_HEALTH_PROBE_SECONDS))
    return [t for t in targets if t.provider not in latest or latest[t.provider][1] < horizon]


class RoutingDecisionView(APIView):
    """GET /routing-decisions/{request_id}: the decision, for the same organization only; readable as soon as
    its response has ended (from the shared cache until the log writer has written its row)."""

    def get(self, request: Request, request_id: str) -> Response:
        org_ids = _caller_organizations(request)
        decision = decision_find(state_of(request).decisions, request_id=request_id, organization_ids=org_ids)
        if decision is None:
            raise ApiError(404, f"No routing decision with id '{request_id}'.", code="not_found", param="request_id")
        return Response(decision)


USAGE_MAX_DAYS = 366


def _usage_day(request: Request, name: str) -> date:
    raw = request.query_params.get(name)
    if not raw:
        raise ApiError(400, f"'{name}' is required: a day as YYYY-MM-DD.", code="invalid_date_range", param=name)
    try:
        if len(raw) != 10:
            raise ValueError(raw)
        return date.fromisoformat(raw)
    except ValueError as exc:
        raise ApiError(400, f"'{name}' must be a day as YYYY-MM-DD (got {raw!r}).", code="invalid_date_range",
                       param=name) from exc


def _usage_organization(request: Request) -> int:
    """Return the organization whose usage the caller reads: the key's; for a portal session, its only one or
    the one named by ?organization= (another organization is the same 404 as a missing one)."""
    org_ids = _caller_organizations(request)
    wanted = request.query_params.get("organization")
    if wanted is not None:
        if not wanted.isdigit() or int(wanted) not in org_ids:
            raise ApiError(404, f"No organization with id '{wanted}'.", code="not_found", param="organization")
        return int(wanted)
    if len(org_ids) != 1:
        raise ApiError(400, "Name the organization (?organization=<id>): this session belongs to "
                            f"{len(org_ids)} organizations.", code="organization_required", param="organization")
    return org_ids[0]


class UsageView(APIView):
    """GET /usage?from=YYYY-MM-DD&to=YYYY-MM-DD[&group_by=day|model|project|key]: the caller's organization's
    requests, tokens and cost_micros from the rollups (days inclusive, UTC)."""

    def get(self, request: Request) -> Response:
        organization_id = _usage_organization(request)
        start, end = _usage_day(request, "from"), _usage_day(request, "to")
        if end < start:
            raise ApiError(400, f"'to' ({end}) is before 'from' ({start}).", code="invalid_date_range", param="to")
        if (end - start).days >= USAGE_MAX_DAYS:
            raise ApiError(400, f"The range is longer than {USAGE_MAX_DAYS} days.", code="invalid_date_range",
                           param="to")
        group_by = request.query_params.get("group_by", "day")
        if group_by not in USAGE_GROUPS:
            raise ApiError(400, f"'group_by' must be one of {', '.join(USAGE_GROUPS)} (got {group_by!r}).",
                           code="invalid_group_by", param="group_by")
        reports = usage_reports(state_of(request).usage_pending, organization_id=organization_id, start=start, end=end,
                                group_bys=[group_by])
        return Response(reports[group_by].as_dict())


def _caller_organizations(request: Request) -> list[int]:
    if isinstance(request.auth, KeyInfo):
        return [request.auth.organization_id]
    user = getattr(request._request, "user", None)
    if user is not None and user.is_authenticated:
        return user_organization_ids(user_id=user.pk)
    raise ApiError(401, "Authenticate with an API key (Authorization: Bearer inf_...).", code="missing_api_key")


async def not_found_view(request: HttpRequest, path: str = "") -> JsonResponse:
    return JsonResponse(error_envelope(f"No such path: {request.path}", type=ErrorType.NOT_FOUND, code="not_found"), status=404)
