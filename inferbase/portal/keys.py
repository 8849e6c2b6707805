"""Access › Keys: the organization's API keys and provider keys. Admins create keys (shown once), revoke,
rename and attach a policy, and add a project's own provider keys (stored encrypted, never shown again);
analysts see key names and prefixes only."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from inferbase.accounts.selectors import (
    Viewer,
    api_key_get,
    api_key_list,
    project_get,
    project_names,
    provider_key_list,
)
from inferbase.accounts.services import api_key_issue, api_key_revoke, api_key_update, provider_key_set
from providers.selectors import provider_by_slug, provider_slugs_for_own_keys
from routing.selectors import routing_policy_get, routing_policy_list

from .access import portal_view, viewer_of

NO_POLICY = ""


class KeyForm(forms.Form):
    project = forms.TypedChoiceField(coerce=int, help_text="The project the key's requests are logged and billed to.")
    name = forms.CharField(max_length=128, required=False, help_text="A name to know it by in Logs.")
    policy = forms.TypedChoiceField(coerce=int, empty_value=None, required=False,
                                    help_text="None: the project's policy, else the organization's.")

    def __init__(self, *args: Any, projects: dict[int, str], policies: dict[int, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["project"].choices = list(projects.items())
        self.fields["policy"].choices = [(NO_POLICY, "the project's or organization's"), *policies.items()]


class KeyEditForm(forms.Form):
    name = forms.CharField(max_length=128, required=False)
    policy = forms.TypedChoiceField(coerce=int, empty_value=None, required=False)

    def __init__(self, *args: Any, policies: dict[int, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["policy"].choices = [(NO_POLICY, "the project's or organization's"), *policies.items()]


class ProviderKeyForm(forms.Form):
    project = forms.TypedChoiceField(coerce=int)
    provider = forms.ChoiceField()
    secret = forms.CharField(widget=forms.PasswordInput(render_value=False), strip=True,
                             help_text="Stored encrypted; it is never shown again.")
    label = forms.CharField(max_length=128, required=False)

    def __init__(self, *args: Any, projects: dict[int, str], providers: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["project"].choices = list(projects.items())
        self.fields["provider"].choices = [(slug, slug) for slug in providers]

    def clean_secret(self) -> str:
        secret = self.cleaned_data["secret"]
        if len(secret) < 8:
            raise forms.ValidationError("That is too short to be a provider's API key (8 characters at least).")
        return secret


def _policies(viewer: Viewer) -> dict[int, str]:
    return {p.pk: p.name for p in routing_policy_list(organization_id=viewer.organization_id)}


def _page(request: HttpRequest, viewer: Viewer, *, key_form: KeyForm | None = None,
          provider_form: ProviderKeyForm | None = None, created: Any = None, status: int = 200) -> HttpResponse:
    context: dict[str, Any] = {"keys": api_key_list(organization_id=viewer.organization_id), "created": created}
    if viewer.is_admin:
        projects = project_names(organization_id=viewer.organization_id)
        policies = _policies(viewer)
        context.update(
            key_form=key_form or KeyForm(projects=projects, policies=policies),
            provider_form=provider_form or ProviderKeyForm(projects=projects, providers=provider_slugs_for_own_keys()),
            provider_keys=provider_key_list(organization_id=viewer.organization_id),
            policies=policies,
        )
    return render(request, "portal/keys/list.html", context, status=status)


@portal_view()
@require_safe
def keys_view(request: HttpRequest) -> HttpResponse:
    """GET /portal/keys/: the organization's keys (analysts: names and prefixes only)."""
    return _page(request, viewer_of(request))


@portal_view(admin_only=True)
@require_POST
def key_create_view(request: HttpRequest) -> HttpResponse:
    """POST /portal/keys/new/: create a key for a project; the page shows it this once."""
    viewer = viewer_of(request)
    form = KeyForm(request.POST, projects=project_names(organization_id=viewer.organization_id),
                   policies=_policies(viewer))
    if not form.is_valid():
        return _page(request, viewer, key_form=form, status=400)
    project = project_get(organization_id=viewer.organization_id, project_id=form.cleaned_data["project"])
    policy_id = form.cleaned_data["policy"]
    policy = routing_policy_get(organization_id=viewer.organization_id, policy_id=policy_id) if policy_id else None
    assert project is not None  # the form's choices are the organization's projects
    created = api_key_issue(project=project, name=form.cleaned_data["name"], policy=policy)
    response = _page(request, viewer, created=created)
    response["Cache-Control"] = "no-store"  # the raw key is on this page only
    return response


@portal_view(admin_only=True)
def key_edit_view(request: HttpRequest, key_id: int) -> HttpResponse:
    """GET/POST /portal/keys/<id>/: rename a key and attach a policy (admins)."""
    viewer = viewer_of(request)
    key = api_key_get(organization_id=viewer.organization_id, key_id=key_id)
    if key is None:
        return render(request, "portal/not_found.html", {"what": f"No key {key_id} in your organization."}, status=404)
    policies = _policies(viewer)
    if request.method == "POST":
        form = KeyEditForm(request.POST, policies=policies)
        if form.is_valid():
            policy_id = form.cleaned_data["policy"]
            policy = (routing_policy_get(organization_id=viewer.organization_id, policy_id=policy_id)
                      if policy_id else None)
            api_key_update(api_key=key, name=form.cleaned_data["name"], policy=policy)
            messages.success(request, f"Saved key {key.prefix}…; new requests use it within a second.")
            return redirect("portal:keys")
        status = 400
    elif request.method in ("GET", "HEAD"):
        form = KeyEditForm(initial={"name": key.name, "policy": key.policy_id or NO_POLICY}, policies=policies)
        status = 200
    else:
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD, POST"})
    return render(request, "portal/keys/edit.html", {"key": key, "form": form}, status=status)


@portal_view(admin_only=True)
@require_POST
def key_revoke_view(request: HttpRequest, key_id: int) -> HttpResponse:
    """POST /portal/keys/<id>/revoke/: revoke a key; every process refuses it within a second."""
    viewer = viewer_of(request)
    key = api_key_get(organization_id=viewer.organization_id, key_id=key_id)
    if key is None:
        return render(request, "portal/not_found.html", {"what": f"No key {key_id} in your organization."}, status=404)
    if key.revoked_at is None:
        api_key_revoke(api_key=key)
        messages.success(request, f"Revoked key {key.prefix}…: requests with it are refused within a second.")
    return redirect("portal:keys")


@portal_view(admin_only=True)
@require_POST
def provider_key_create_view(request: HttpRequest) -> HttpResponse:
    """POST /portal/provider-keys/new/: store a project's own key for a provider, encrypted (replacing one)."""
    viewer = viewer_of(request)
    form = ProviderKeyForm(request.POST, projects=project_names(organization_id=viewer.organization_id),
                           providers=provider_slugs_for_own_keys())
    if not form.is_valid():
        return _page(request, viewer, provider_form=form, status=400)
    project = project_get(organization_id=viewer.organization_id, project_id=form.cleaned_data["project"])
    assert project is not None  # the form's choices are the organization's projects
    provider = provider_by_slug(slug=form.cleaned_data["provider"])
    assert provider is not None  # the form's choices are the providers there are
    provider_key_set(project=project, provider=provider, secret=form.cleaned_data["secret"],
                     label=form.cleaned_data["label"])
    messages.success(request, f"Stored {provider.slug}'s key for {project.name}, encrypted; it is not shown again.")
    return redirect("portal:keys")
