"""Guardrail checks compiled from a policy's configuration, run over whole texts, and their results."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from billing.pricing import GuardrailCharge

from .blocklist import blocklist_detector
from .config import Action, CheckName, CheckSpec, GuardrailConfig
from .detectors import PII, SECRETS
from .scan import Detector, Span, redact, spans_merge, text_scan

BLOCKED_STATUS = 400
BLOCKED_CODE = "guardrail_blocked"


@dataclass(frozen=True, slots=True)
class CompiledCheck:
    spec: CheckSpec
    where: str  # input | output
    detectors: tuple[Detector, ...]


@dataclass(frozen=True, slots=True)
class Guardrails:
    """A policy's checks, compiled once (held by the routing snapshot's policy, reused by every request)."""

    input: tuple[CompiledCheck, ...] = ()
    output: tuple[CompiledCheck, ...] = ()

    def charges(self) -> tuple[GuardrailCharge, ...]:
        """Return the price of every check, input and output: the most they can add to a request (reservations)."""
        return tuple(GuardrailCharge(str(c.spec.check), c.where, c.spec.price_micros) for c in (*self.input, *self.output))


NO_GUARDRAILS = Guardrails()


def _detectors(spec: CheckSpec, blocklist: tuple[str, ...]) -> tuple[Detector, ...]:
    if spec.check == CheckName.BLOCKLIST:
        return (blocklist_detector(blocklist),)
    pool = PII if spec.check == CheckName.PII else SECRETS
    return tuple(d for d in pool if not spec.kinds or d.kind in spec.kinds)


@lru_cache(maxsize=256)
def guardrails_compile(config: GuardrailConfig) -> Guardrails:
    """Return the compiled checks of a configuration (patterns built once per distinct configuration)."""
    return Guardrails(
        input=tuple(CompiledCheck(s, "input", _detectors(s, config.blocklist)) for s in config.input),
        output=tuple(CompiledCheck(s, "output", _detectors(s, config.blocklist)) for s in config.output),
    )


@dataclass(frozen=True, slots=True)
class CheckResult:
    """What one check found, for the log record: never the matched text."""

    check: str
    where: str
    action: str
    count: int
    kinds: tuple[tuple[str, int], ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.check, "where": self.where, "action": self.action, "count": self.count,
                "kinds": dict(self.kinds)}


class GuardrailBlocked(Exception):
    """A block action fired: the request is refused before any upstream call (input) or its answer withheld
    (output). Carries the status, code and message of the 400 envelope."""

    status = BLOCKED_STATUS
    code = BLOCKED_CODE

    def __init__(self, result: CheckResult) -> None:
        kinds = ", ".join(kind for kind, _ in result.kinds)
        where = "request" if result.where == "input" else "answer"
        self.message = (f"The {where} was blocked by the guardrail check '{result.check}' on the {result.where}"
                        f"{f' ({kinds})' if kinds and kinds != result.check else ''}.")
        super().__init__(self.message)
        self.result = result
        self.param = "messages" if result.where == "input" else None


def check_results(checks: Sequence[CompiledCheck], counts: Counter[tuple[int, str]]) -> tuple[CheckResult, ...]:
    """Return one result per check from per-(check index, kind) counts."""
    results = []
    for tag, check in enumerate(checks):
        names = dict.fromkeys(d.kind for d in check.detectors)  # a kind may have several detectors
        kinds = tuple((kind, counts[(tag, kind)]) for kind in names if counts[(tag, kind)])
        results.append(CheckResult(str(check.spec.check), check.where, str(check.spec.action),
                                   sum(n for _, n in kinds), kinds))
    return tuple(results)


def first_block(checks: Sequence[CompiledCheck], results: Sequence[CheckResult]) -> CheckResult | None:
    """Return the result of the first blocking check (configuration order) that found something."""
    return next((r for c, r in zip(checks, results, strict=True) if c.spec.action == Action.BLOCK and r.count), None)


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """The checks of one direction over a request's texts: the texts to use, what was found, what it costs."""

    texts: tuple[str, ...]  # redacted where a redact check found something; otherwise as given
    results: tuple[CheckResult, ...]
    blocked: CheckResult | None
    charges: tuple[GuardrailCharge, ...]

    def raise_if_blocked(self) -> None:
        """Raise GuardrailBlocked when a block check found something."""
        if self.blocked is not None:
            raise GuardrailBlocked(self.blocked)


def texts_check(texts: Sequence[str], checks: Sequence[CompiledCheck]) -> CheckOutcome:
    """Run the checks of one direction over whole texts; pure, the same findings a streamed scan makes."""
    pairs = [(detector, tag) for tag, check in enumerate(checks) for detector in check.detectors]
    redacting = {tag for tag, check in enumerate(checks) if check.spec.action == Action.REDACT}
    counts: Counter[tuple[int, str]] = Counter()
    out: list[str] = []
    for text in texts:
        spans = text_scan(pairs, text) if text else []
        counts.update((s.tag, s.kind) for s in spans)
        hidden: list[Span] = [s for s in spans if s.tag in redacting]
        out.append(redact(text, spans_merge(hidden)) if hidden else text)
    results = check_results(checks, counts)
    charges = tuple(GuardrailCharge(str(c.spec.check), c.where, c.spec.price_micros) for c in checks)
    return CheckOutcome(tuple(out), results, first_block(checks, results), charges)


def _message_texts(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [p["text"] for p in content if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)]
    return []


def _message_with(message: dict[str, Any], texts: list[str]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": texts[0]}
    parts, it = [], iter(texts)
    for part in content or []:
        if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
            part = {**part, "text": next(it)}
        parts.append(part)
    return {**message, "content": parts}


def messages_check(messages: Sequence[dict[str, Any]], checks: Sequence[CompiledCheck]) -> tuple[list[dict[str, Any]], CheckOutcome]:
    """Run the input checks over the text of a request's messages; return the messages to forward (redacted
    copies where something was redacted, the originals otherwise) and the outcome."""
    per_message = [_message_texts(m) for m in messages]
    outcome = texts_check([t for texts in per_message for t in texts], checks)
    forwarded, cursor = [], 0
    for message, texts in zip(messages, per_message, strict=True):
        new = list(outcome.texts[cursor:cursor + len(texts)])
        cursor += len(texts)
        forwarded.append(_message_with(message, new) if new != texts else message)
    return forwarded, outcome
