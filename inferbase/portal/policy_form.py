"""The routing policy form: every field the engine reads, chosen from the catalog by name, with errors in words."""

from __future__ import annotations

from typing import Any

from django import forms

from routing.decision import TASKS
from routing.models import RoutingPolicy
from routing.policies import POLICY_FIELDS

from .guardrail_form import (
    BLOCKLIST_FIELD,
    clean_blocklist,
    guardrail_fields,
    guardrail_initial,
    guardrail_rows,
    guardrails_clean,
)

FLOORS = RoutingPolicy.QualityFloor
MAX_CHAIN = 10  # as the request's own routing.chain_length allows
FLOOR_HELP = {"none": "no bar", "basic": "a low bar", "standard": "the usual bar", "strict": "a high bar"}


class PolicyForm(forms.Form):
    """Edit a policy: the catalog's models by name, its providers and regions, and where the policy applies."""

    name = forms.CharField(max_length=128)
    pool = forms.MultipleChoiceField(
        required=False, widget=forms.SelectMultiple(attrs={"size": 10}),
        help_text="The models auto may choose from. None selected: the whole catalog.")
    allow_variants = forms.BooleanField(required=False, initial=True,
                                        help_text="A pooled model's variants (e.g. :thinking) may be chosen too.")
    objective = forms.ChoiceField(choices=RoutingPolicy.Objective.choices, initial="balanced",
                                  help_text="What auto ranks the eligible models on.")
    quality_floor = forms.ChoiceField(choices=FLOORS.choices, initial="standard",
                                      help_text="The benchmark bar a model must clear for the request's task.")
    require_pinned_in_pool = forms.BooleanField(
        required=False, help_text="A request naming a model outside the pool is refused (403) instead of served.")
    allowed_providers = forms.MultipleChoiceField(
        required=False, widget=forms.SelectMultiple(attrs={"size": 5}),
        help_text="None selected: every provider.")
    data_regions = forms.MultipleChoiceField(required=False, widget=forms.SelectMultiple(attrs={"size": 4}),
                                             help_text="None selected: every region.")
    chain_length = forms.IntegerField(min_value=1, max_value=MAX_CHAIN, initial=4,
                                      help_text="Attempts at most: the pick, then its fallbacks.")
    first_token_timeout_ms = forms.IntegerField(min_value=1, initial=15_000, label="First-token budget (ms)",
                                                help_text="How long one attempt may wait for its first token.")
    total_deadline_ms = forms.IntegerField(min_value=1, initial=60_000, label="Deadline (ms)",
                                           help_text="How long the whole request may take, every attempt included.")
    max_cost_micros = forms.IntegerField(min_value=1, required=False, label="Cost ceiling (micro-dollars)",
                                         help_text="Models expected to cost more per request are not chosen. "
                                                   "Empty: no ceiling.")
    structured_output_extraction = forms.BooleanField(
        required=False, initial=True, help_text="Take the JSON out of an answer wrapped in prose or code fences.")
    structured_output_reask = forms.BooleanField(
        required=False, help_text="Ask the model once more when its answer is not the JSON asked for.")
    explore_unmeasured = forms.BooleanField(
        required=False, help_text="Send a small share of auto traffic to eligible models without latency samples.")
    admit_unmeasured = forms.BooleanField(
        required=False, help_text="Models without benchmark scores pass the quality floor.")
    applies_to_organization = forms.BooleanField(required=False, label="The organization's default",
                                                 help_text="Every key with no policy of its own or of its project.")
    applies_to_projects = forms.MultipleChoiceField(required=False, label="Projects' default",
                                                    widget=forms.CheckboxSelectMultiple)
    applies_to_keys = forms.MultipleChoiceField(required=False, label="Keys", widget=forms.CheckboxSelectMultiple)

    def __init__(self, *args: Any, models: list[tuple[str, str]], providers: list[str], regions: list[str],
                 projects: dict[int, str], keys: dict[int, str], taken_names: set[str], guardrails: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.current_guardrails = guardrails  # as stored: an unchanged configuration is saved as it was
        self.model_names = dict(models)
        self.fields["pool"].choices = [(cid, f"{name} ({cid})" if name != cid else cid) for cid, name in models]
        self.fields["allowed_providers"].choices = [(slug, slug) for slug in providers]
        self.fields["data_regions"].choices = [(region, region) for region in regions]
        self.fields["applies_to_projects"].choices = [(str(pk), name) for pk, name in projects.items()]
        self.fields["applies_to_keys"].choices = [(str(pk), label) for pk, label in keys.items()]
        self.taken_names = taken_names
        for task in TASKS:
            self.fields[f"floor_{task}"] = forms.ChoiceField(
                required=False, label=task.replace("_", " "),
                choices=[("", "the policy's floor"), *[(v, f"{v} ({FLOOR_HELP[v]})") for v in FLOORS.values]])
        self.fields.update(guardrail_fields())

    @property
    def floor_fields(self) -> list[forms.BoundField]:
        return [self[f"floor_{task}"] for task in TASKS]

    @property
    def guardrail_rows(self) -> list[dict[str, Any]]:
        return guardrail_rows(self)

    @property
    def blocklist_field(self) -> forms.BoundField:
        return self[BLOCKLIST_FIELD]

    def clean_guardrails_blocklist(self) -> list[str]:
        return clean_blocklist(self.cleaned_data.get(BLOCKLIST_FIELD) or "")

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if not name:
            raise forms.ValidationError("Give the policy a name.")
        if name in self.taken_names:
            raise forms.ValidationError(f"Another policy of your organization is already named {name!r}.")
        return name

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        first, deadline = data.get("first_token_timeout_ms"), data.get("total_deadline_ms")
        if first is not None and deadline is not None and first > deadline:
            self.add_error("total_deadline_ms", f"The deadline ({deadline} ms) must be at least the first-token "
                                                f"budget ({first} ms): no attempt could finish within it.")
        if data.get("structured_output_reask") and not data.get("structured_output_extraction"):
            self.add_error("structured_output_reask", "Re-asking needs extraction on: the gateway re-asks only "
                                                      "when extraction finds no JSON in the answer.")
        guardrails = guardrails_clean(self, data, current=self.current_guardrails)
        if guardrails is not None:
            data["guardrails"] = guardrails
        return data

    def policy_fields(self) -> dict[str, Any]:
        """Return the cleaned values as the policy's recorded fields (call after is_valid)."""
        data = self.cleaned_data
        values = {name: data[name] for name in POLICY_FIELDS if name in data}
        values["quality_floor_by_task"] = {task: data[f"floor_{task}"] for task in TASKS if data.get(f"floor_{task}")}
        values["pool"] = sorted(data["pool"])
        values["allowed_providers"] = sorted(data["allowed_providers"])
        values["data_regions"] = sorted(data["data_regions"])
        return values

    def attachments(self) -> tuple[bool, set[int], set[int]]:
        data = self.cleaned_data
        return (bool(data["applies_to_organization"]), {int(pk) for pk in data["applies_to_projects"]},
                {int(pk) for pk in data["applies_to_keys"]})


def policy_initial(fields: dict[str, Any], *, organization_default: bool = False, project_ids: frozenset[int] = frozenset(),
                   key_ids: frozenset[int] = frozenset()) -> dict[str, Any]:
    """Return the form's initial values for a policy's recorded fields and where it applies."""
    initial = {name: value for name, value in fields.items() if name not in ("quality_floor_by_task", "guardrails")}
    initial.update(guardrail_initial(fields.get("guardrails")))
    for task, floor in (fields.get("quality_floor_by_task") or {}).items():
        initial[f"floor_{task}"] = floor
    initial["applies_to_organization"] = organization_default
    initial["applies_to_projects"] = [str(pk) for pk in project_ids]
    initial["applies_to_keys"] = [str(pk) for pk in key_ids]
    return initial
