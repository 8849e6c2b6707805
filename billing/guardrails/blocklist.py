"""The admin's blocklist: phrases matched case-insensitively as whole words, compiled once per list.

A whole text first goes through a word-set prefilter (a few C-level string operations), so that only the
phrases whose rarest word occurs are put in the pattern that runs; a stream runs the whole pattern on the
little text it holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

import regex

from .scan import Detector, detector

MAX_GAP = 8  # whitespace between a phrase's words: at most this many characters
_WORD = regex.compile(r"\w+")
# ASCII bytes to lowercase word characters, everything else ASCII to a space; bytes above 127 (the UTF-8
# of other scripts) kept, so that the words holding them can be split properly when a phrase needs it.
_ASCII_WORDS = bytes(
    c + 32 if 65 <= c <= 90 else c if (48 <= c <= 57 or 97 <= c <= 122 or c == 95 or c >= 128) else 32
    for c in range(256)
)
# The same, with bytes above 127 to a space too: the ASCII runs inside words of other scripts ("«acme»").
_ASCII_RUNS = bytes(c if c < 128 else 32 for c in _ASCII_WORDS)


def phrase_words(phrase: str) -> list[str]:
    """Return a phrase's words as the prefilter sees them (lowercase, split at anything not a word character)."""
    return _WORD.findall(phrase.lower())


def text_words(text: str, *, unicode_words: bool = True) -> list[bytes]:
    """Return the lowercase words of a text (UTF-8 bytes, repeats kept) among which is every word a whole-word
    match of a key word can start on.

    ASCII words come from a byte translation and a split (C speed). When no key word holds another script
    (`unicode_words` false), the ASCII runs are enough: a word holding another script's letters cannot equal an
    ASCII key, the ASCII runs inside it may ("«acme»", a superset). Otherwise the words of other scripts are
    split properly too."""
    raw = text.encode()
    if raw.isascii():
        return raw.translate(_ASCII_WORDS).split()
    runs = raw.translate(_ASCII_RUNS).split()
    if not unicode_words:
        return runs
    words = set(raw.translate(_ASCII_WORDS).split())
    words.update(runs)
    glued = b" ".join(w for w in words if not w.isascii()).decode()
    words.update(w.encode() for w in _WORD.findall(glued.lower()))
    return list(words)


def _phrase_source(phrase: str) -> str:
    parts = phrase.split()
    return rf"\s{{1,{MAX_GAP}}}".join(regex.escape(part) for part in parts)


def _detector(phrases: Sequence[str], narrow: Callable[[str], Detector | None] | None = None) -> Detector:
    # Phrases come longest first, so that at one position the longest wins, in the full and any narrowed pattern.
    alternatives = "|".join(_phrase_source(p) for p in phrases)
    max_len = max((len(p) + MAX_GAP * len(p.split()) for p in phrases), default=1)
    return detector("blocklist", rf"(?<!\w)(?:{alternatives})(?!\w)", flags=regex.IGNORECASE, max_len=max_len,
                    narrow=narrow)


@lru_cache(maxsize=64)
def blocklist_detector(phrases: tuple[str, ...]) -> Detector:
    """Return the detector for a blocklist (phrases trimmed and deduplicated by the config parser)."""
    ordered = tuple(sorted(phrases, key=lambda p: (-len(p), p.lower())))
    # Each phrase is indexed by its longest word: a text without that word cannot contain the phrase.
    keys: dict[bytes, list[int]] = {}
    always: list[int] = []
    for index, phrase in enumerate(ordered):
        words = phrase_words(phrase)
        if words:
            keys.setdefault(max(words, key=len).encode(), []).append(index)
        else:
            always.append(index)
    key_set = frozenset(keys)
    unicode_keys = not all(key.isascii() for key in key_set)

    @lru_cache(maxsize=256)
    def narrowed(indexes: tuple[int, ...]) -> Detector:
        return _detector([ordered[i] for i in indexes])

    def narrow(text: str) -> Detector | None:
        hits = key_set.intersection(text_words(text, unicode_words=unicode_keys))
        indexes = sorted({i for key in hits for i in keys[key]} | set(always))
        return narrowed(tuple(indexes)) if indexes else None

    return _detector(ordered, narrow)
