"""Output checks on a streamed answer: text is released as soon as no finding can still cover it.

The guard holds back only the tail that could still become (or extend) a finding of a redact or block
check, never more than the longest pattern; everything before it is released, findings replaced by their
marker. Whatever the chunking, the released text joined is what `texts_check` makes of the whole answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from billing.pricing import GuardrailCharge

from .checks import CheckResult, CompiledCheck, check_results, first_block
from .config import Action
from .scan import Span, detector_scan, redact, spans_merge

# Text kept before the scan positions, so that a pattern's lookbehind sees what precedes them.
CONTEXT_CHARS = 16
# Scan once this much new text has arrived (a delta is ~16 characters): a scan costs about the same for a
# few characters as for a few dozen, so this divides the guard's CPU per answer for a few deltas of delay.
SCAN_EVERY_CHARS = 48


class StreamGuard:
    """One streamed text (one choice's content) under the output checks. `feed` each delta, then `finish`."""

    def __init__(self, checks: Sequence[CompiledCheck], *, scan_every_chars: int = SCAN_EVERY_CHARS) -> None:
        self._checks = tuple(checks)
        self._pairs = [(d, tag) for tag, c in enumerate(self._checks) for d in c.detectors]
        actions = [c.spec.action for c in self._checks]
        self._holding = [actions[tag] in (Action.REDACT, Action.BLOCK) for _, tag in self._pairs]
        self._redacting = {tag for tag, a in enumerate(actions) if a == Action.REDACT}
        self._blocking = {tag for tag, a in enumerate(actions) if a == Action.BLOCK}
        self._pos = [0] * len(self._pairs)  # absolute: where each detector's next scan starts
        self._buf = ""
        self._base = 0  # absolute position of self._buf[0]
        self._emitted = 0  # absolute: everything before it has been released
        self._spans: list[Span] = []  # settled findings to redact, not yet released
        self._counts: Counter[tuple[int, str]] = Counter()
        self._finished = False
        self._scan_every = scan_every_chars
        self._unscanned = 0
        self.blocked: CheckResult | None = None

    def feed(self, text: str) -> str:
        """Take the next piece of the answer; return the text now safe to send (possibly empty)."""
        if self.blocked is not None or self._finished:
            return ""
        self._buf += text
        self._unscanned += len(text)
        if self._unscanned < self._scan_every:
            return ""
        self._unscanned = 0
        return self._advance(final=False)

    def finish(self) -> str:
        """End the answer; return the rest of it."""
        if self.blocked is not None or self._finished:
            return ""
        out = self._advance(final=True)
        self._finished = True
        return out

    def results(self) -> tuple[CheckResult, ...]:
        """Return what each check found so far (complete after finish, or up to the block)."""
        return check_results(self._checks, self._counts)

    def charges(self) -> tuple[GuardrailCharge, ...]:
        return tuple(GuardrailCharge(str(c.spec.check), c.where, c.spec.price_micros) for c in self._checks)

    def _advance(self, *, final: bool) -> str:
        buf, base = self._buf, self._base
        block_at: int | None = None
        for index, (detector, tag) in enumerate(self._pairs):
            kind = detector.kind

            def found(start: int, end: int, tag: int = tag, kind: str = kind) -> None:
                nonlocal block_at
                self._counts[(tag, kind)] += 1
                if tag in self._redacting:
                    self._spans.append(Span(base + start, base + end, kind, tag))
                elif tag in self._blocking and (block_at is None or base + start < block_at):
                    block_at = base + start

            self._pos[index] = base + detector_scan(detector, buf, self._pos[index] - base, final=final, found=found)
        held = [p for p, holding in zip(self._pos, self._holding, strict=True) if holding]
        release = base + len(buf) if final or not held else min(held)
        if block_at is not None:
            self.blocked = first_block(self._checks, self.results())
            release = min(release, block_at)
        groups = spans_merge(self._spans)
        for group in groups:
            if group.end > release:
                release = min(release, group.start)
                break
        release = max(release, self._emitted)
        out = redact(buf[self._emitted - base:release - base],
                     [g for g in groups if g.end <= release and g.start >= self._emitted], offset=self._emitted)
        self._spans = [s for s in self._spans if s.start >= release]
        self._emitted = release
        keep = min(min(self._pos, default=release), release) - CONTEXT_CHARS
        if keep > base:
            self._buf = buf[keep - base:]
            self._base = keep
        return out
