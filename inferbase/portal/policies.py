"""Routing › Policies: the organization's routing policies, their versions, and (for admins) the editor with
its dry-run. Analysts read; every write answers them 403."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from inferbase.accounts.selectors import Viewer, api_key_labels, policy_attachments, project_names
from inferbase.accounts.services import routing_policy_attach
from routing.models import RoutingPolicy
from routing.policies import FieldChange, policy_diff, policy_fields, policy_snap_from_fields
from routing.selectors import catalog_choices, policy_version_list, routing_policy_get, routing_policy_list
from routing.services import routing_policy_restore, routing_policy_save

from .access import portal_view, viewer_of
from .dryrun import DEFAULT_REQUESTS, DryRunForm, dry_run
from .guardrail_form import guardrail_changes, guardrail_lines
from .policy_form import PolicyForm, policy_initial
from .rows import model_labels

# What an empty list or mapping means in a policy's field, as its page says it.
_EMPTY = {"pool": "the whole catalog", "allowed_providers": "all", "data_regions": "all",
          "quality_floor_by_task": "no floor of its own for any task"}


def _shown_value(field: str, value: Any, names: dict[str, str]) -> Any:
    if field == "pool" and isinstance(value, list):
        return model_labels(value, names) or _EMPTY["pool"]
    if isinstance(value, list):
        return ", ".join(str(item) for item in value) or _EMPTY.get(field, "none")
    if isinstance(value, dict):
        return ", ".join(f"{key}: {item}" for key, item in value.items()) or _EMPTY.get(field, "none")
    return value


def shown_changes(change: FieldChange, names: dict[str, str], *, first: bool = False) -> list[FieldChange]:
    """Return a version's change as its diff shows it: the pool's models by name, lists and mappings as text, the
    guardrails one line per check that changed."""
    if change.field == "guardrails":
        return guardrail_changes(change.before, change.after, first=first)
    return [FieldChange(change.field, _shown_value(change.field, change.before, names),
                        _shown_value(change.field, change.after, names))]


def _not_found(request: HttpRequest, policy_id: int) -> HttpResponse:
    return render(request, "portal/not_found.html", {"what": f"No policy {policy_id} in your organization."},
                  status=404)


def _form(viewer: Viewer, data: Any = None, *, policy: RoutingPolicy | None = None,
          initial: dict[str, Any] | None = None) -> PolicyForm:
    models, providers, regions = catalog_choices()
    taken = {p.name for p in routing_policy_list(organization_id=viewer.organization_id)
             if policy is None or p.pk != policy.pk}
    return PolicyForm(data, initial=initial, models=models, providers=providers, regions=regions,
                      guardrails=policy.guardrails if policy is not None else None,
                      projects=project_names(organization_id=viewer.organization_id),
                      keys=api_key_labels(organization_id=viewer.organization_id), taken_names=taken)


@portal_view()
@require_safe
def policies_view(request: HttpRequest) -> HttpResponse:
    """GET /portal/policies/: the organization's policies and where each applies."""
    viewer = viewer_of(request)
    policies = routing_policy_list(organization_id=viewer.organization_id)
    names = dict(catalog_choices()[0])
    rows = []
    for policy in policies:
        attached = policy_attachments(organization_id=viewer.organization_id, policy_id=policy.pk)
        rows.append({"policy": policy, "attached": attached, "latest": policy.versions.first(),
                     "pool": [names.get(cid, cid) for cid in policy.pool or ()]})
    return render(request, "portal/policies/list.html", {"rows": rows})


@portal_view()
@require_safe
def policy_detail_view(request: HttpRequest, policy_id: int) -> HttpResponse:
    """GET /portal/policies/<id>/: the policy, where it applies, and its versions as diffs."""
    viewer = viewer_of(request)
    policy = routing_policy_get(organization_id=viewer.organization_id, policy_id=policy_id)
    if policy is None:
        return _not_found(request, policy_id)
    versions = policy_version_list(policy=policy)
    names = dict(catalog_choices()[0])
    history = []
    for index, version in enumerate(versions):
        older = versions[index + 1] if index + 1 < len(versions) else None
        changes = [shown for change in policy_diff(older.fields if older else None, version.fields)
                   for shown in shown_changes(change, names, first=older is None)]
        history.append({"version": version, "changes": changes, "first": older is None})
    attached = policy_attachments(organization_id=viewer.organization_id, policy_id=policy.pk)
    projects = project_names(organization_id=viewer.organization_id)
    keys = api_key_labels(organization_id=viewer.organization_id)
    return render(request, "portal/policies/detail.html", {
        "policy": policy, "fields": policy_fields(policy), "history": history,
        "guardrails": guardrail_lines(policy.guardrails),
        "pool": [(cid, names.get(cid, cid)) for cid in policy.pool or ()],
        "attached": attached, "projects": [projects[pk] for pk in attached.project_ids if pk in projects],
        "keys": [keys[pk] for pk in attached.key_ids if pk in keys],
        "current": versions[0].number if versions else None,
    })


@portal_view(admin_only=True)
def policy_new_view(request: HttpRequest) -> HttpResponse:
    """GET/POST /portal/policies/new/: create a policy (admins); a dry-run first is optional."""
    viewer = viewer_of(request)
    policy = RoutingPolicy(organization_id=viewer.organization_id)
    return _edit(request, viewer, policy, initial=policy_initial(policy_fields(policy)))


@portal_view(admin_only=True)
def policy_edit_view(request: HttpRequest, policy_id: int) -> HttpResponse:
    """GET/POST /portal/policies/<id>/edit/: edit a policy (admins), dry-run the edit, save it as a new version."""
    viewer = viewer_of(request)
    policy = routing_policy_get(organization_id=viewer.organization_id, policy_id=policy_id)
    if policy is None:
        return _not_found(request, policy_id)
    attached = policy_attachments(organization_id=viewer.organization_id, policy_id=policy.pk)
    initial = policy_initial(policy_fields(policy), organization_default=attached.organization_default,
                             project_ids=attached.project_ids, key_ids=attached.key_ids)
    return _edit(request, viewer, policy, initial=initial)


def _edit(request: HttpRequest, viewer: Viewer, policy: RoutingPolicy, *, initial: dict[str, Any]) -> HttpResponse:
    if request.method not in ("GET", "HEAD", "POST"):
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD, POST"})
    if request.method != "POST":
        form = _form(viewer, policy=policy, initial=initial)
        return _edit_page(request, policy, form, DryRunForm(initial={"dry_run_requests": DEFAULT_REQUESTS}), None)
    form = _form(viewer, request.POST, policy=policy)
    replay_form = DryRunForm(request.POST)
    if not form.is_valid():
        return _edit_page(request, policy, form, replay_form, None, status=400)
    if request.POST.get("action") == "dry_run":
        if not replay_form.is_valid():
            return _edit_page(request, policy, form, replay_form, None, status=400)
        data = replay_form.cleaned_data
        result = dry_run(organization_id=viewer.organization_id,
                         policy=policy_snap_from_fields(form.policy_fields(), policy_id=policy.pk),
                         limit=data.get("dry_run_requests") or DEFAULT_REQUESTS,
                         since=data.get("dry_run_since"), until=data.get("dry_run_until"))
        return _edit_page(request, policy, form, replay_form, result)
    created = policy.pk is None
    version = routing_policy_save(policy=policy, fields=form.policy_fields(), author=request.user.get_username())
    organization_default, project_ids, key_ids = form.attachments()
    routing_policy_attach(policy=policy, organization_default=organization_default, project_ids=project_ids,
                          key_ids=key_ids)
    if version is None:
        messages.info(request, "No field of the policy changed; where it applies is saved.")
    else:
        messages.success(request, f"{'Created' if created else 'Saved'} {policy.name} as version {version.number}; "
                                  "new requests use it within a second.")
    return redirect("portal:policy_detail", policy_id=policy.pk)


def _edit_page(request: HttpRequest, policy: RoutingPolicy, form: PolicyForm, replay_form: DryRunForm,
               result: Any, *, status: int = 200) -> HttpResponse:
    return render(request, "portal/policies/edit.html", {
        "policy": policy, "form": form, "replay_form": replay_form, "dry_run": result,
        "is_new": policy.pk is None,
    }, status=status)


@portal_view(admin_only=True)
@require_POST
def policy_restore_view(request: HttpRequest, policy_id: int, number: int) -> HttpResponse:
    """POST /portal/policies/<id>/versions/<n>/restore/: make version n current again, as a new version."""
    viewer = viewer_of(request)
    policy = routing_policy_get(organization_id=viewer.organization_id, policy_id=policy_id)
    version = None if policy is None else next(
        (v for v in policy_version_list(policy=policy) if v.number == number), None)
    if policy is None or version is None:
        return _not_found(request, policy_id)
    taken = {p.name for p in routing_policy_list(organization_id=viewer.organization_id) if p.pk != policy.pk}
    if version.fields.get("name") in taken:
        messages.error(request, f"Version {number} is named {version.fields['name']!r}, which another policy now has:"
                                " rename that one first.")
        return redirect("portal:policy_detail", policy_id=policy.pk)
    restored = routing_policy_restore(policy=policy, version=version, author=request.user.get_username())
    if restored is None:
        messages.info(request, f"Version {number} is already what the policy is.")
    else:
        messages.success(request, f"Restored version {number} as version {restored.number}.")
    return redirect("portal:policy_detail", policy_id=policy.pk)
