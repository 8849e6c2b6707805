"""A policy's guardrail checks in the portal: per direction and check an action, a price and (pii, secrets) the
kinds, plus the blocklist one phrase per line. Saved through billing's parser, so the stored JSON is what the
gateway reads; shown in a version's diff in words (docs/billing.md, "Guardrail checks")."""

from __future__ import annotations

import re
from typing import Any

from django import forms

from billing.guardrails.config import (
    DIRECTIONS,
    KINDS,
    MAX_BLOCKLIST_PHRASES,
    MAX_PHRASE_CHARS,
    MAX_PRICE_MICROS,
    Action,
    CheckName,
    CheckSpec,
    GuardrailConfig,
    GuardrailConfigError,
    guardrail_config_parse,
)
from routing.policies import FieldChange

OFF = "off"
CHECKS: tuple[str, ...] = tuple(str(check) for check in CheckName)
CHECK_LABELS = {"pii": "PII", "secrets": "Secrets and API keys", "blocklist": "Blocklist"}
CHECK_HELP = {"pii": "e-mails, phones, cards, IBANs, national ids", "secrets": "provider keys, private keys, JWTs",
              "blocklist": "the phrases below"}
BLOCKLIST_FIELD = "guardrails_blocklist"
_PARSER_ERROR = re.compile(r"^(input|output)\[(\d+)\]\.(\w+): (.*)$")
_PART_OF = {"check": "action", "action": "action", "price_micros": "price", "kinds": "kinds"}
_SHOWN_PHRASES = 8


def field_name(direction: str, check: str, part: str) -> str:
    """Return the form field of one direction's check: part is action, price or kinds."""
    return f"guardrails_{direction}_{check}_{part}"


def guardrail_fields() -> dict[str, forms.Field]:
    """Return the form fields of every direction × check, and the blocklist's textarea."""
    fields: dict[str, forms.Field] = {}
    price_error = f"A price is a whole number of micro-dollars from 0 to {MAX_PRICE_MICROS:,} ($1) per check."
    for check in CHECKS:
        for direction in DIRECTIONS:
            where = f"{CHECK_LABELS[check]} on the {direction}"
            fields[field_name(direction, check, "action")] = forms.ChoiceField(
                required=False, label=f"{where}: action", initial=OFF,
                choices=[(OFF, "off"), *[(str(a), str(a)) for a in Action]],
                widget=forms.Select(attrs={"aria-label": f"{where}: action"}))
            fields[field_name(direction, check, "price")] = forms.IntegerField(
                required=False, min_value=0, max_value=MAX_PRICE_MICROS, label=f"{where}: price (micro-dollars)",
                error_messages={"invalid": price_error, "min_value": price_error, "max_value": price_error},
                widget=forms.NumberInput(attrs={"aria-label": f"{where}: price per check in micro-dollars",
                                                "placeholder": "0", "step": 1}))
            if check != CheckName.BLOCKLIST:
                fields[field_name(direction, check, "kinds")] = forms.MultipleChoiceField(
                    required=False, label=f"{where}: kinds", choices=[(kind, kind) for kind in KINDS[check]],
                    widget=forms.CheckboxSelectMultiple)
    fields[BLOCKLIST_FIELD] = forms.CharField(
        required=False, strip=False, label="Blocklist phrases", widget=forms.Textarea(attrs={"rows": 4}),
        help_text=f"One phrase per line, matched as whole words, case-insensitively (at most "
                  f"{MAX_BLOCKLIST_PHRASES:,} phrases of {MAX_PHRASE_CHARS} characters).")
    return fields


def _parsed(raw: Any) -> GuardrailConfig | None:
    try:
        return guardrail_config_parse(raw or {})
    except GuardrailConfigError:
        return None


def guardrail_initial(raw: Any) -> dict[str, Any]:
    """Return the form's initial values for a policy's stored guardrails. A configuration that does not parse (the
    gateway ignores it, so the policy runs no checks) shows as no checks."""
    config = _parsed(raw) or GuardrailConfig()
    initial: dict[str, Any] = {}
    for direction in DIRECTIONS:
        for spec in getattr(config, direction):
            initial[field_name(direction, spec.check, "action")] = str(spec.action)
            initial[field_name(direction, spec.check, "price")] = spec.price_micros
            if spec.check != CheckName.BLOCKLIST:
                initial[field_name(direction, spec.check, "kinds")] = list(spec.kinds)
    initial[BLOCKLIST_FIELD] = "\n".join(config.blocklist)
    return initial


def clean_blocklist(text: str) -> list[str]:
    """Return the phrases of the textarea (blank lines dropped); raise ValidationError naming each bad line."""
    phrases = [(number, " ".join(line.split())) for number, line in enumerate(text.splitlines(), 1)]
    phrases = [(number, phrase) for number, phrase in phrases if phrase]
    if len(phrases) > MAX_BLOCKLIST_PHRASES:
        raise forms.ValidationError(f"At most {MAX_BLOCKLIST_PHRASES:,} phrases: you listed {len(phrases):,}.")
    long = [f"Line {number} has {len(phrase)} characters: a phrase may have at most {MAX_PHRASE_CHARS}."
            for number, phrase in phrases if len(phrase) > MAX_PHRASE_CHARS]
    if long:
        raise forms.ValidationError(long[:5] + ([f"And {len(long) - 5} more lines are too long."] if len(long) > 5 else []))
    return [phrase for _, phrase in phrases]


def guardrails_clean(form: forms.Form, data: dict[str, Any], *, current: Any) -> Any:
    """Return the guardrails JSON to store from the form's cleaned data, or None after adding each error to its
    field. Checks keep their order in `current` (the first blocking check is the one a 400 names) and an unchanged
    configuration stays exactly as stored."""
    names = [name for name in form.fields if name.startswith("guardrails_")]
    if any(name in form.errors for name in names):
        return None
    current_config = _parsed(current)
    phrases = list(data.get(BLOCKLIST_FIELD) or ())  # clean_blocklist's phrases
    raw: dict[str, Any] = {"input": [], "output": [], "blocklist": phrases}
    order: dict[str, list[str]] = {}
    for direction in DIRECTIONS:
        before = {str(spec.check): spec for spec in getattr(current_config or GuardrailConfig(), direction)}
        checks = [*before, *(c for c in CHECKS if c not in before)]
        order[direction] = []
        for check in checks:
            action = data.get(field_name(direction, check, "action")) or OFF
            if action == OFF:
                continue
            if check == CheckName.BLOCKLIST and not phrases:
                form.add_error(BLOCKLIST_FIELD, f"The blocklist check is on for the {direction}: list at least one "
                                                "phrase, one per line, or turn the check off.")
                continue
            spec: dict[str, Any] = {"check": check, "action": action,
                                    "price_micros": data.get(field_name(direction, check, "price")) or 0}
            kinds = list(data.get(field_name(direction, check, "kinds")) or ())
            old = before.get(check)
            if old is not None and set(kinds) == set(old.kinds):
                kinds = list(old.kinds)  # the order it was stored in
            if kinds:
                spec["kinds"] = kinds
            raw[direction].append(spec)
            order[direction].append(check)
    if form.errors.get(BLOCKLIST_FIELD):
        return None
    try:
        config = guardrail_config_parse(raw)
    except GuardrailConfigError as exc:  # the form's own checks should leave none: place any on its field
        for error in exc.errors:
            form.add_error(_field_of(error, order), error)
        return None
    if current_config is not None and config == current_config:
        return current or {}
    return {} if config == GuardrailConfig() else config.as_dict()


def _field_of(error: str, order: dict[str, list[str]]) -> str | None:
    match = _PARSER_ERROR.match(error)
    if match is None:
        return BLOCKLIST_FIELD if error.startswith("blocklist") else None
    direction, index, part = match.group(1), int(match.group(2)), match.group(3)
    check = order[direction][index] if index < len(order[direction]) else None
    if check is None or (check == CheckName.BLOCKLIST and part == "kinds"):
        return None
    return field_name(direction, check, _PART_OF.get(part, "action"))


def guardrail_rows(form: forms.Form) -> list[dict[str, Any]]:
    """Return the table of the editor: one row per check, one cell per direction with its bound fields."""
    rows = []
    for check in CHECKS:
        cells = []
        for direction in DIRECTIONS:
            kinds = form[field_name(direction, check, "kinds")] if check != CheckName.BLOCKLIST else None
            chosen = [str(k) for k in (kinds.value() or ())] if kinds is not None else []
            cells.append({"direction": direction, "action": form[field_name(direction, check, "action")],
                          "price": form[field_name(direction, check, "price")], "kinds": kinds,
                          "kinds_shown": ", ".join(chosen) if chosen else "every kind"})
        rows.append({"check": check, "label": CHECK_LABELS[check], "help": CHECK_HELP[check], "cells": cells})
    return rows


def _spec_text(spec: CheckSpec | None) -> str:
    if spec is None:
        return "off"
    text = f"{spec.action}, {spec.price_micros} µ$"
    return f"{text} ({', '.join(spec.kinds)})" if spec.kinds else text


def _phrases_text(phrases: tuple[str, ...]) -> str:
    if not phrases:
        return "none"
    shown = ", ".join(phrases[:_SHOWN_PHRASES])
    more = f", … ({len(phrases)} phrases)" if len(phrases) > _SHOWN_PHRASES else ""
    return f"{shown}{more}"


def guardrail_lines(raw: Any) -> list[str]:
    """Return a stored configuration in words, one line per enabled check and one for the blocklist."""
    config = _parsed(raw)
    if config is None:
        return ["an invalid configuration, ignored by the gateway: the policy runs no checks"]
    lines = [f"{direction} {spec.check}: {_spec_text(spec)}" for direction in DIRECTIONS
             for spec in getattr(config, direction)]
    if config.blocklist:
        lines.append(f"blocklist: {_phrases_text(config.blocklist)}")
    return lines


def guardrail_changes(before: Any, after: Any, *, first: bool = False) -> list[FieldChange]:
    """Return a guardrails change as its diff shows it: one change per check that differs ("guardrails · input
    pii": "redact, 50 µ$" → "block, 50 µ$") and one for the blocklist's phrases; for a first version, what is on."""
    old = GuardrailConfig() if first else _parsed(before)
    new = _parsed(after)
    if old is None or new is None:
        return [FieldChange("guardrails", "; ".join(guardrail_lines(before)) or "none",
                            "; ".join(guardrail_lines(after)) or "none")]
    changes = []
    for direction in DIRECTIONS:
        was = {str(spec.check): spec for spec in getattr(old, direction)}
        now = {str(spec.check): spec for spec in getattr(new, direction)}
        for check in CHECKS:
            if was.get(check) != now.get(check):
                changes.append(FieldChange(f"guardrails · {direction} {check}", _spec_text(was.get(check)),
                                           _spec_text(now.get(check))))
    if old.blocklist != new.blocklist:
        changes.append(FieldChange("guardrails · blocklist", _phrases_text(old.blocklist),
                                   _phrases_text(new.blocklist)))
    if not changes and first:
        changes.append(FieldChange("guardrails", None, "none"))
    return changes
