"""The matching engine every check shares: detectors, whole-text scans, and the rule that makes a streamed
scan find exactly what a whole-text scan finds.

A detector is a bounded pattern (no match is longer than `max_len`) and an optional checksum. Scanning
goes left to right; a match is settled once more text cannot change it: no partial match (a prefix that
more text could complete) starts before it, it does not reach the end of the text seen so far, and no
longer match from its start could reach that end either (a greedy pattern stopped by the end of the text,
`+44 20 7946 ` before `0958` arrives). A whole text is the same scan with nothing more to come.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import regex

from .gates import gated_scan, lead_candidates

Pattern = Any  # regex.Pattern[str]; the regex module ships no type stubs


@dataclass(frozen=True, slots=True)
class Detector:
    """One kind of finding (email, openai_key, a blocklist, ...): a bounded pattern and an optional checksum."""

    kind: str
    pattern: Pattern
    probe: Pattern  # the pattern followed by a failure: it matches only partially, where a match could go on
    max_len: int  # no match is longer: a streamed scan never holds back more than this
    valid: Callable[[str], bool] | None = None
    # The character before a match must not match this (a lookbehind, checked in Python on the few candidates:
    # a pattern that starts with a lookbehind is scanned several times slower by the regex module).
    not_after: Pattern | None = None
    # Substrings one of which every match contains: a whole text without any of them is not scanned.
    required: tuple[str, ...] = ()
    # For a whole text: the detector to run on it (a narrower one), or None when nothing can match.
    narrow: Callable[[str], Detector | None] | None = None
    # A whole-text scan tries this detector only at the candidate positions of its lead (see gates.py):
    # "digits" or "upper"; "" scans the whole text with the pattern.
    lead: str = ""

    def for_text(self, text: str) -> Detector | None:
        """Return the detector a whole-text scan runs on `text`, or None when it cannot match there."""
        if self.required and not any(needle in text for needle in self.required):
            return None
        return self.narrow(text) if self.narrow is not None else self


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int
    kind: str
    tag: int  # which check of the caller's list found it


def detector(kind: str, source: str, *, max_len: int, flags: int = 0, valid: Callable[[str], bool] | None = None,
             not_after: str = "", required: tuple[str, ...] = (),
             narrow: Callable[[str], Detector | None] | None = None, lead: str = "") -> Detector:
    """Compile a detector from its pattern source (bounded: no match longer than max_len); `not_after` is a
    pattern the text just before a match must not end with; `lead` names the gate of its candidate starts."""
    pattern = regex.compile(source, flags | regex.VERSION0)
    probe = regex.compile(f"(?:{source})(?!)", flags | regex.VERSION0)
    before = regex.compile(f"(?:{not_after})\\Z", regex.VERSION0) if not_after else None
    return Detector(kind, pattern, probe, max_len, valid, before, required, narrow, lead)


def detector_scan(detector: Detector, text: str, pos: int, *, final: bool,
                  found: Callable[[int, int], None]) -> int:
    """Report each settled, valid match at or after `pos` through `found(start, end)`; return where the next
    scan starts: the start of the first unsettled match, or len(text) when nothing more can start before it."""
    pattern, valid, not_after = detector.pattern, detector.valid, detector.not_after
    end_of_text = len(text)
    while True:
        match = pattern.search(text, pos, partial=not final)
        if match is None:
            return end_of_text
        start, end = match.span()
        if not final and (match.partial or end == end_of_text
                          or (end_of_text - start < detector.max_len and detector.probe.match(text, start, partial=True))):
            return start  # more text may complete it, extend it, or undo a lookahead at the end
        if end == start:
            pos = start + 1
            continue
        if not_after is not None and not_after.search(text, max(0, start - 8), start):
            pos = start + 1
        elif valid is None or valid(match.group()):
            found(start, end)
            pos = end
        else:
            pos = start + 1  # a failed checksum: another match may start inside it


def spans_merge(spans: Sequence[Span]) -> list[Span]:
    """Return overlapping spans merged, each named by its earliest (then longest) member, in order."""
    merged: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, -s.end, s.tag)):
        if merged and span.start < merged[-1].end:
            last = merged[-1]
            if span.end > last.end:
                merged[-1] = Span(last.start, span.end, last.kind, last.tag)
        else:
            merged.append(span)
    return merged


def marker(kind: str) -> str:
    """Return what a redacted span is replaced with."""
    return f"[REDACTED:{kind}]"


def redact(text: str, spans: Sequence[Span], offset: int = 0) -> str:
    """Return text (which starts at absolute position `offset`) with each merged span replaced by its marker."""
    out: list[str] = []
    cursor = 0
    for span in spans:
        out.append(text[cursor:span.start - offset])
        out.append(marker(span.kind))
        cursor = span.end - offset
    out.append(text[cursor:])
    return "".join(out)


def text_scan(detectors: Sequence[tuple[Detector, int]], text: str) -> list[Span]:
    """Return every valid match of the (detector, tag) pairs in a whole text, unmerged, detector by detector.

    Detectors with a lead are tried only where their lead's gate says a match can start (gates.py): one pass
    per lead instead of one per pattern, the same findings."""
    found: list[list[Span]] = [[] for _ in detectors]
    gated: dict[str, list[tuple[Detector, int]]] = {}
    for index, (detector, tag) in enumerate(detectors):
        runner = detector.for_text(text)
        if runner is None:
            continue
        if runner.lead:
            gated.setdefault(runner.lead, []).append((runner, index))
            continue
        out, kind = found[index], detector.kind
        detector_scan(runner, text, 0, final=True, found=lambda s, e, o=out, k=kind, t=tag: o.append(Span(s, e, k, t)))
    if gated:
        candidates = lead_candidates(set(gated), text)
        for lead, members in gated.items():
            def report(member: int, start: int, end: int, members: list[tuple[Detector, int]] = members) -> None:
                index = members[member][1]
                found[index].append(Span(start, end, detectors[index][0].kind, detectors[index][1]))
            gated_scan([d for d, _ in members], text, candidates[lead], report)
    return [span for spans in found for span in spans]
