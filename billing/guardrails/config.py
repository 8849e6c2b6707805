"""A policy's guardrail configuration: the JSON schema, its parser, and the typed value it yields.

    {"input":  [{"check": "pii", "action": "redact", "price_micros": 50, "kinds": ["email", "card"]}],
     "output": [{"check": "secrets", "action": "block", "price_micros": 20}],
     "blocklist": ["project falcon", "acme merger"]}

`kinds` (optional) narrows a pii or secrets check to some of its kinds. A blocklist check matches the
policy's `blocklist`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .detectors import PII_KINDS, SECRET_KINDS

MAX_BLOCKLIST_PHRASES = 5_000
MAX_PHRASE_CHARS = 200
MAX_PRICE_MICROS = 1_000_000  # $1 per check: anything above is a typo


class Action(StrEnum):
    FLAG = "flag"  # recorded on the log, text untouched
    REDACT = "redact"  # each finding replaced by [REDACTED:<kind>]
    BLOCK = "block"  # the request is refused (input) or the answer withheld (output)


class CheckName(StrEnum):
    PII = "pii"
    SECRETS = "secrets"
    BLOCKLIST = "blocklist"


KINDS: dict[str, tuple[str, ...]] = {CheckName.PII: PII_KINDS, CheckName.SECRETS: SECRET_KINDS,
                                     CheckName.BLOCKLIST: ("blocklist",)}
DIRECTIONS = ("input", "output")


@dataclass(frozen=True, slots=True)
class CheckSpec:
    check: CheckName
    action: Action
    price_micros: int = 0
    kinds: tuple[str, ...] = ()  # empty: every kind of the check

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"check": str(self.check), "action": str(self.action), "price_micros": self.price_micros}
        if self.kinds:
            out["kinds"] = list(self.kinds)
        return out


@dataclass(frozen=True, slots=True)
class GuardrailConfig:
    input: tuple[CheckSpec, ...] = ()
    output: tuple[CheckSpec, ...] = ()
    blocklist: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """Return the JSON the parser accepts (what a policy stores)."""
        return {"input": [c.as_dict() for c in self.input], "output": [c.as_dict() for c in self.output],
                "blocklist": list(self.blocklist)}


class GuardrailConfigError(ValueError):
    """A guardrail configuration that does not validate; `errors` says where and why, one line each."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = tuple(errors)


def _choice(value: Any, allowed: type[StrEnum], where: str, errors: list[str]) -> Any:
    names = [str(m) for m in allowed]
    if not isinstance(value, str) or value not in names:
        errors.append(f"{where}: must be one of {', '.join(names)} (got {value!r})")
        return None
    return allowed(value)


def _check_spec(raw: Any, where: str, errors: list[str]) -> CheckSpec | None:
    if not isinstance(raw, dict):
        errors.append(f"{where}: must be an object with check, action and price_micros")
        return None
    before = len(errors)
    unknown = sorted(set(raw) - {"check", "action", "price_micros", "kinds"})
    if unknown:
        errors.append(f"{where}: unknown field {', '.join(unknown)} (allowed: check, action, price_micros, kinds)")
    for required in ("check", "action"):
        if required not in raw:
            errors.append(f"{where}.{required}: is required")
    check = _choice(raw["check"], CheckName, f"{where}.check", errors) if "check" in raw else None
    action = _choice(raw["action"], Action, f"{where}.action", errors) if "action" in raw else None
    price = raw.get("price_micros", 0)
    if isinstance(price, bool) or not isinstance(price, int) or not 0 <= price <= MAX_PRICE_MICROS:
        errors.append(f"{where}.price_micros: must be an integer from 0 to {MAX_PRICE_MICROS} (got {price!r})")
    kinds = raw.get("kinds", [])
    if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
        errors.append(f"{where}.kinds: must be a list of strings")
        kinds = []
    elif kinds and check is not None:
        if check == CheckName.BLOCKLIST:
            errors.append(f"{where}.kinds: the blocklist check has no kinds")
        else:
            bad = [k for k in kinds if k not in KINDS[check]]
            if bad:
                errors.append(f"{where}.kinds: unknown {check} kind {', '.join(map(repr, bad))} "
                              f"(known: {', '.join(KINDS[check])})")
    if len(errors) > before or check is None or action is None:
        return None
    return CheckSpec(check, action, price, tuple(dict.fromkeys(kinds)))


def _blocklist(raw: Any, errors: list[str]) -> tuple[str, ...]:
    if not isinstance(raw, list):
        errors.append("blocklist: must be a list of phrases")
        return ()
    if len(raw) > MAX_BLOCKLIST_PHRASES:
        errors.append(f"blocklist: at most {MAX_BLOCKLIST_PHRASES} phrases (got {len(raw)})")
        return ()
    phrases: dict[str, str] = {}
    for index, item in enumerate(raw):
        phrase = " ".join(item.split()) if isinstance(item, str) else None
        if not phrase or len(phrase) > MAX_PHRASE_CHARS:
            errors.append(f"blocklist[{index}]: must be a phrase of 1 to {MAX_PHRASE_CHARS} characters (got {item!r})")
            continue
        phrases.setdefault(phrase.lower(), phrase)  # case-insensitive matching: one of each
    return tuple(phrases.values())


def guardrail_config_parse(data: Any) -> GuardrailConfig:
    """Return the typed configuration of a policy's guardrails JSON; raise GuardrailConfigError listing every problem."""
    if data is None:
        return GuardrailConfig()
    if not isinstance(data, dict):
        raise GuardrailConfigError(["guardrails: must be an object with input, output and blocklist"])
    errors: list[str] = []
    unknown = sorted(set(data) - {"input", "output", "blocklist"})
    if unknown:
        errors.append(f"guardrails: unknown field {', '.join(unknown)} (allowed: input, output, blocklist)")
    blocklist = _blocklist(data.get("blocklist", []), errors)
    directions: dict[str, tuple[CheckSpec, ...]] = {}
    for direction in DIRECTIONS:
        raw = data.get(direction, [])
        if not isinstance(raw, list):
            errors.append(f"{direction}: must be a list of checks")
            continue
        specs: list[CheckSpec] = []
        for index, item in enumerate(raw):
            spec = _check_spec(item, f"{direction}[{index}]", errors)
            if spec is None:
                continue
            if any(s.check == spec.check for s in specs):
                errors.append(f"{direction}[{index}].check: {spec.check} is already enabled on the {direction}")
                continue
            if spec.check == CheckName.BLOCKLIST and not blocklist:
                errors.append(f"{direction}[{index}].check: the blocklist check needs phrases in blocklist")
                continue
            specs.append(spec)
        directions[direction] = tuple(specs)
    if errors:
        raise GuardrailConfigError(errors)
    return GuardrailConfig(directions.get("input", ()), directions.get("output", ()), blocklist)
