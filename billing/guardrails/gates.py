"""Candidate starts for whole-text scans of the digit-led and capital-led PII detectors.

A pattern that starts with a character class (`\\d\\d\\d…`, `[A-Z][A-Z]\\d\\d…`) costs the regex module a test at
every character of the text, and nine of them cost nine passes over an 8k-token prompt. Instead, one pass per
lead finds the few positions where any of its detectors can start a match that its `not_after` accepts, and all
the detectors of that lead are tried there at once: one combined pattern of lookaheads, `(?:(?=(?P<_0>A))|)
(?:(?=(?P<_1>B))|)…`, matched at each candidate, gives each detector's match at that position (a lookahead
takes the first match the pattern alone would). Each detector then keeps its own scan rule (next try after its
last finding, `not_after`, the checksum), so the findings are exactly those of the pattern-by-pattern scan:
`tests/billing/test_guardrail_gates.py` compares the two on varied texts.

The leads (what every accepted match of their detectors looks like; the detectors' `not_after` all refuse an
ASCII letter or digit just before a match):

- `digits`: a run of `\\d` at the start, of 8, or of 3 to 7 followed by a separator (space, dot, hyphen) and a
  `\\d`; the character before not an ASCII letter or digit.
- `upper`: a capital A-Z, then within three characters a `\\d` preceded by a capital or by a capital and a space
  (`[A-Z][A-Z]\\d\\d`, `[A-Z][A-Z] ?\\d\\d`, `[XYZ]\\d{7}`).
- `email`: the start of the run of local-part characters (at most 64) just before an `@`.
- `plus`: a `+` followed by a `\\d` (international phone numbers).

One pass of one pattern finds the candidates of both `digits` and `upper` among ASCII digits (its first
character is `[0-9]`, which the regex module skips to quickly); `str.find` finds the `@`s and the `+`s. Non-ASCII decimal
digits (`\\d` matches Arabic-Indic, Devanagari, fullwidth… digits too) are found by one more pass (an ASCII text
has none); every position of a `\\d` run holding one, and the three before it, are candidates too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import regex

# Every digit-led pattern starts with a run of 8 digits, or a run of 3 to 7 then a separator and a digit
# (555-, 020 , 4111 , 123-45-), and nothing before the run that every not_after refuses (a letter or a digit).
_DIGIT_RUN = r"[0-9][0-9][0-9]+(?:(?<=[0-9]{8})|(?=[ .-]\d))"
# One pass: at an ASCII digit q that follows a capital (or a capital and a space), or that starts such a run.
_GATE = regex.compile(r"[0-9](?:(?<=[A-Z][0-9]|[A-Z] [0-9])|(?<![0-9A-Za-z][0-9])[0-9][0-9]+(?:(?<=[0-9]{8})|(?=[ .-]\d)))")
_DIGIT_RUN_AT = regex.compile(_DIGIT_RUN)
_DIGIT = regex.compile(r"\d")
_ASCII_BYTES = bytes(range(128))
_ASCII_ALNUM = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_UNICODE_DIGIT = regex.compile(r"[\u0660-\U0010FFFF](?<=\d)")
_LOCAL_BACK = regex.compile(r"[\w.%+-]{1,65}", regex.REVERSE | regex.VERSION0)  # an email's local part, backwards
_GROUP_NAME = regex.compile(r"\(\?P([<=])(\w+)")
LEADS = ("digits", "upper", "email", "plus")


def unicode_digits(text: str) -> list[int]:
    """Return the positions of the non-ASCII decimal digits of `text` (what `\\d` matches beyond 0-9; the first
    is U+0660, ARABIC-INDIC DIGIT ZERO).

    A text with few characters from U+0660 up (English with a dash or two) takes one pass of a pattern that skips
    everything below it at C speed; a text in other scripts (where that pass would stop at every letter) has its
    ASCII bytes deleted from its UTF-8 (C speed) and only the characters left searched, each digit found then
    located with str.find. A sample of 64 characters chooses; both give the same positions."""
    if text.isascii():
        return []
    step = max(1, len(text) // 64)
    if sum(char >= "\u0660" for char in text[::step]) <= 2:
        return [match.start() for match in _UNICODE_DIGIT.finditer(text)]
    others = text.encode().translate(None, _ASCII_BYTES).decode()
    positions: list[int] = []
    for char in set(_DIGIT.findall(others)):  # only non-ASCII characters here
        at = text.find(char)
        while at >= 0:
            positions.append(at)
            at = text.find(char, at + 1)
    return sorted(positions)


def _digits_and_upper(text: str) -> tuple[list[int], list[int]]:
    digits: list[int] = []
    upper: set[int] = set()
    size = len(text)
    for match in _GATE.finditer(text):
        q, end = match.span()
        if end > q + 1:
            digits.append(q)  # the run branch
            continue
        # The capital branch: [XYZ]\d… starts 1 before, [A-Z][A-Z]\d… 2 before, [A-Z][A-Z] \d… 3 before.
        before = text[q - 1]
        if before == " ":
            if q >= 3 and "A" <= text[q - 3] <= "Z" and "A" <= text[q - 2] <= "Z":
                upper.add(q - 3)
            if _DIGIT_RUN_AT.match(text, q):
                digits.append(q)  # "X 4111 1111 …": a digit-led match may start here too
            continue
        if before in "XYZ":
            upper.add(q - 1)
        if q >= 2 and "A" <= text[q - 2] <= "Z":
            upper.add(q - 2)
    extra = unicode_digits(text)
    if not extra:
        return digits, sorted(upper)
    # A run of \d holding a non-ASCII digit: any position from the run's start to just after that digit; and
    # up to three characters before a non-ASCII digit, for the capital-led patterns.
    # Kept: a start on a \d not preceded by an ASCII letter or digit (what every digit-led match needs), and a
    # capital for the capital-led ones.
    more: set[int] = set(digits)
    for digit in extra:
        first = digit
        while first and _DIGIT.match(text, first - 1):
            first -= 1
        more.update(p for p in range(first, min(digit + 2, size))
                    if _DIGIT.match(text, p) and not (p and text[p - 1] in _ASCII_ALNUM))
        upper.update(p for p in range(max(0, digit - 3), digit) if "A" <= text[p] <= "Z")
    return sorted(more), sorted(upper)


def _email(text: str) -> list[int]:
    starts = []
    at = text.find("@")
    while at >= 0:
        local = _LOCAL_BACK.match(text, max(0, at - 65), at)
        if local is not None and at - local.start() <= 64:
            starts.append(local.start())  # a local part starts at its run's start (the pattern's lookbehind)
        at = text.find("@", at + 1)
    return starts


def _plus(text: str) -> list[int]:
    starts = []
    at = text.find("+")
    while at >= 0:
        if _DIGIT.match(text, at + 1):
            starts.append(at)  # +44 …: a plus then a digit
        at = text.find("+", at + 1)
    return starts


def lead_candidates(leads: set[str], text: str) -> dict[str, list[int]]:
    """Return, per lead, the positions in order where a detector of that lead can start a match that its
    `not_after` accepts (a superset: the detectors decide)."""
    out: dict[str, list[int]] = {}
    if "digits" in leads or "upper" in leads:
        out["digits"], out["upper"] = _digits_and_upper(text)
    if "email" in leads:
        out["email"] = _email(text)
    if "plus" in leads:
        out["plus"] = _plus(text)
    return out


def _renamed(source: str, prefix: str) -> str:
    return _GROUP_NAME.sub(lambda m: f"(?P{m.group(1)}{prefix}{m.group(2)}", source)


@lru_cache(maxsize=64)
def combined(sources: tuple[str, ...], flags: int) -> Any:
    """Return one pattern that, matched at a position, captures each source's match there as group `_i`.

    The sources' own groups must be named (they are renamed apart); an unnamed group would shift the numbers."""
    parts = []
    for index, source in enumerate(sources):
        if regex.compile(source, flags).groups != len(regex.compile(source, flags).groupindex):
            raise ValueError(f"a gated detector's groups must be named: {source}")
        parts.append(f"(?:(?=(?P<_{index}>{_renamed(source, f'_{index}_')}))|)")
    return regex.compile("".join(parts), flags)


def gated_scan(detectors: Sequence[Any], text: str, candidates: list[int],
               found: Callable[[int, int, int], None]) -> None:
    """Report `found(index, start, end)` for each finding of `detectors[index]` (all of one lead) in a whole
    text, trying them only at `candidates`; the same findings as `detector_scan(..., final=True)` for each."""
    if not candidates:
        return
    pattern = combined(tuple(d.pattern.pattern for d in detectors), detectors[0].pattern.flags)
    groups = [pattern.groupindex[f"_{i}"] for i in range(len(detectors))]
    rules = [(d.not_after, d.valid) for d in detectors]
    next_start = [0] * len(detectors)
    for start in candidates:
        match = pattern.match(text, start)
        if match.lastindex is None:
            continue  # none of them matches here
        regs = match.regs
        for index, group in enumerate(groups):
            end = regs[group][1]
            if end <= start or start < next_start[index]:
                continue  # no match here (-1), an empty one, or inside this detector's last finding
            not_after, valid = rules[index]
            if not_after is not None and not_after.search(text, max(0, start - 8), start):
                continue
            if valid is None or valid(text[start:end]):
                found(index, start, end)
                next_start[index] = end
