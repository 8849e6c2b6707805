"""Bounded input windows and hashed sparse features shared by training and inference."""

from __future__ import annotations

import functools
import re
import threading
from dataclasses import dataclass

import numpy as np

SYSTEM_CHARS = 1_000
USER_HEAD_CHARS = 3_000
USER_TAIL_CHARS = 1_000
CHAR_HEAD_CHARS = 1_200
CHAR_TAIL_CHARS = 300
SYSTEM_CHAR_CHARS = 300
INSTRUCTION_HEAD_CHARS = 240
INSTRUCTION_TAIL_CHARS = 160
ASK_CHARS = 200
SYSTEM_CACHE_SIZE = 256
N_BUCKETS = 1 << 17
FEATURE_VERSION = "f4"

_MASK = np.uint64(N_BUCKETS - 1)
_PRIME = 0x100000001B3
_MIX_A = 0xFF51AFD7ED558CCD
_MIX_B = 0xC4CEB9FE1A85EC53
_SALT_CHAR = {3: 0x9E3779B97F4A7C15, 4: 0xBF58476D1CE4E5B9, 5: 0x94D049BB133111EB}
_SALT_SYSTEM = 0x2545F4914F6CDD1D
_SALT_BIGRAM = 0x5851F42D4C957F2D
_SALT_INSTRUCTION = 0x7A3B9C1D5E6F0817
_SALT_CHAR2 = 0x632BE59BD9B4E019
_SALT_ASK = 0x3C6EF372FE94F82B
_SPACE = np.array([32], dtype=np.uint64)

_CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF))

_HARD_WORDS = (
    "prove proof proofs derive derivation rigorous rigorously optimize optimise optimal optimization "
    "asymptotic complexity concurrency concurrent distributed lockfree scalable scalability architecture "
    "formal formally invariant invariants theorem lemma counterexample induction tradeoffs tradeoff "
    "démontrer démontrez prouver prouvez démonstration beweise beweisen beweis optimieren "
    "demuestra demuestre demostrar demostración optimizar demonstre demonstrar demonstração otimizar "
    "dimostra dimostrare dimostrazione ottimizzare докажите доказать доказательство оптимизируйте "
    "оптимизировать"
).split()
_HARD_BIGRAMS = ("step by", "by step", "edge cases", "trade offs", "étape par", "paso a", "schritt für")
_HARD_CJK = ("证明", "証明", "最优", "最適", "推导", "導出", "逐步", "ステップ")
_CONSTRAINT_WORDS = (
    "must should exactly without ensure require requires required only include avoid constraint "
    "constraints handle support never always limit doit doivent sans debe deben sin muss müssen ohne "
    "deve devem sem deve devono senza должен должна должно должны без"
).split()
_CONSTRAINT_BIGRAMS = ("at least", "at most", "no more", "no longer", "make sure", "au moins", "al menos", "mindestens")
_CONSTRAINT_CJK = ("必须", "不要", "至少", "必ず", "以内", "ないで")
_LIST_ITEM = re.compile(r"\n[ \t]*(?:[-*•]|\d{1,2}[.)])[ \t]")
# Shapes of included material (text is lower-cased, digits folded to 0 before these run).
_HEADER_LINE = re.compile(r"(?m)^[^\n:：]{1,24}[:：][ \t]*\S")
_MONEY = ("$", "€", "£", "¥", "₹", "₽", " usd", " eur", "元", "円", "원")
_MATHS = ("=", "^", "∫", "∑", "√", "π", "≤", "≥", "±", "\\frac", "\\int")
_QUOTES = "\"«»“”„「」『』"
# Where an ask usually ends and included material begins: a line break, a colon before a space, an opening quote.
_ASK_BREAK = re.compile(r"\n|[:：]\s|[\"«“„「『]")
N_DENSE = 20
_DIGITS = str.maketrans("123456789", "000000000")


@dataclass(frozen=True, slots=True)
class Window:
    """The bounded slice of a request the classifier reads."""

    system: str
    user: str
    user_length: int


@dataclass(frozen=True, slots=True)
class Features:
    """Hashed bucket indices per feature group plus a small dense vector."""

    user_words: np.ndarray
    user_chars: np.ndarray
    instruction: np.ndarray
    system: np.ndarray
    ask: np.ndarray
    dense: np.ndarray

    def hashed(self) -> tuple[np.ndarray, ...]:
        """Return the hashed groups in the order group gains are given: user words, user characters,
        instruction span, system, ask."""
        return (self.user_words, self.user_chars, self.instruction, self.system, self.ask)


def window_of(*, system: str, user: str) -> Window:
    """Return the bounded window: system head, user head and tail, and the user's full length."""
    if len(user) > USER_HEAD_CHARS + USER_TAIL_CHARS:
        user_window = user[:USER_HEAD_CHARS] + "\n" + user[-USER_TAIL_CHARS:]
    else:
        user_window = user
    return Window(system=system[:SYSTEM_CHARS], user=user_window, user_length=len(user))


_tables_lock = threading.RLock()
_tables: dict[str, np.ndarray] = {}


def _word_table() -> np.ndarray:
    """Return a lookup of which BMP code points count as word characters, built once."""
    table = _tables.get("word")
    if table is None:
        with _tables_lock:
            table = _tables.get("word")
            if table is None:
                table = np.array([chr(i).isalnum() or i == 95 for i in range(0x10000)], dtype=bool)
                for low, high in _CJK_RANGES:
                    table[low : high + 1] = False
                _tables["word"] = table
    return table


def _powers() -> tuple[np.ndarray, np.ndarray]:
    """Return _PRIME**i and its inverse power modulo 2**64 for every position of a window."""
    cached = _tables.get("powers")
    if cached is None:
        with _tables_lock:
            size = USER_HEAD_CHARS + USER_TAIL_CHARS + 1
            inverse = pow(_PRIME, -1, 1 << 64)
            forward = np.cumprod(np.full(size, _PRIME, dtype=np.uint64), dtype=np.uint64)
            backward = np.cumprod(np.full(size, inverse, dtype=np.uint64), dtype=np.uint64)
            one = np.ones(1, dtype=np.uint64)
            _tables["inverse"] = np.concatenate([one, backward[:-1]])
            _tables["powers"] = cached = np.concatenate([one, forward[:-1]])
    return cached, _tables["inverse"]


def _codepoints(text: str) -> np.ndarray:
    """Return lower-cased code points with whitespace folded to spaces and digits to zero."""
    points = np.frombuffer(text.lower().encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64)
    points[points < 32] = 32
    points[(points >= 49) & (points <= 57)] = 48
    return points


def _mix(values: np.ndarray, salt: int) -> np.ndarray:
    """Scramble 64-bit values and reduce them to bucket indices."""
    values = values ^ np.uint64(salt)
    values = values ^ (values >> np.uint64(33))
    values = values * np.uint64(_MIX_A)
    values = values ^ (values >> np.uint64(29))
    values = values * np.uint64(_MIX_B)
    values = values ^ (values >> np.uint64(32))
    return (values & _MASK).astype(np.intp)


def _char_ngrams(points: np.ndarray, salt: int, sizes: tuple[int, ...] = (3, 4, 5)) -> np.ndarray:
    """Return bucket indices of every character n-gram of the given sizes (consecutive, from 2 up)."""
    padded = np.concatenate([_SPACE, points, _SPACE])
    prime = np.uint64(_PRIME)
    size = len(padded)
    rolling = padded[: size - 1] * prime + padded[1:]
    grams = [rolling + np.uint64(_SALT_CHAR2)] if 2 in sizes else []
    for n in range(3, max(sizes) + 1):
        if size < n:
            break
        rolling = rolling[: size - n + 1] * prime + padded[n - 1 :]
        if n in sizes:
            grams.append(rolling + np.uint64(_SALT_CHAR[n]))
    return _mix(np.concatenate(grams), salt) if grams else np.zeros(0, dtype=np.intp)


def _word_hashes(points: np.ndarray) -> np.ndarray:
    """Return one position-independent 64-bit hash per word (run of word characters, CJK excluded)."""
    mask = _word_table()[np.minimum(points, 0xFFFF)]
    starts = mask.copy()
    starts[1:] &= ~mask[:-1]
    start_pos = np.flatnonzero(starts)
    if len(start_pos) == 0:
        return np.zeros(0, dtype=np.uint64)
    forward, inverse = _powers()
    contrib = points * forward[: len(points)]
    contrib[~mask] = 0
    return np.add.reduceat(contrib, start_pos) * inverse[start_pos]


def _bigram_hashes(words: np.ndarray) -> np.ndarray:
    """Return one 64-bit hash per pair of adjacent words."""
    return words[:-1] * np.uint64(_PRIME) + words[1:]


def _word_ngrams(words: np.ndarray, bigrams: np.ndarray, salt: int) -> np.ndarray:
    """Return bucket indices of word unigrams and bigrams."""
    return np.concatenate([_mix(words, salt), _mix(bigrams, salt ^ _SALT_BIGRAM)])


def _keyword_table() -> tuple[np.ndarray, np.ndarray]:
    """Return sorted hashes of every keyword unigram and bigram, and each one's group (0 hard, 1 constraint)."""
    cached = _tables.get("keywords")
    if cached is None:
        with _tables_lock:
            entries: dict[int, int] = {}
            groups = ((*_HARD_WORDS, *_HARD_BIGRAMS), (*_CONSTRAINT_WORDS, *_CONSTRAINT_BIGRAMS))
            for group, phrases in enumerate(groups):
                for phrase in phrases:
                    words = _word_hashes(_codepoints(phrase))
                    hashes = words if len(words) == 1 else _bigram_hashes(words)
                    entries[int(hashes[0])] = group
            keys = np.array(sorted(entries), dtype=np.uint64)
            _tables["keyword_groups"] = np.array([entries[int(k)] for k in keys], dtype=np.intp)
            _tables["keywords"] = cached = keys
    return cached, _tables["keyword_groups"]


def _keyword_counts(words: np.ndarray, bigrams: np.ndarray) -> np.ndarray:
    """Count hard-signal and constraint keywords among word unigrams and bigrams."""
    keys, groups = _keyword_table()
    values = np.concatenate([words, bigrams])
    if len(values) == 0:
        return np.zeros(2, dtype=np.intp)
    positions = np.minimum(np.searchsorted(keys, values), len(keys) - 1)
    return np.bincount(groups[positions[keys[positions] == values]], minlength=2)


def _list_items(text: str) -> int:
    """Count lines that start a bullet or a numbered item."""
    return len(_LIST_ITEM.findall(text)) if "\n" in text else 0


def _cjk_count(text: str, phrases: tuple[str, ...]) -> int:
    """Count CJK keyword occurrences, skipping the scan for ASCII text."""
    return 0 if text.isascii() else sum(text.count(phrase) for phrase in phrases)


def _count(text: str, needles: tuple[str, ...]) -> int:
    """Count occurrences of several substrings (str.count is far cheaper than a regex over the window)."""
    return sum(text.count(needle) for needle in needles)


def _shape(folded: str) -> list[float]:
    """Return shape signals of included material: quotes, header lines, money, clock times, maths symbols, digits."""
    lines = folded.split("\n")
    first = lines[0].rstrip()
    last = lines[-1].strip() if len(lines) > 1 else ""
    return [
        min(sum(folded.count(quote) for quote in _QUOTES), 8) / 4.0,
        float(first.endswith((":", "：")) or last.endswith((":", "："))),
        min(len(_HEADER_LINE.findall(folded)), 12) / 6.0 if len(lines) > 1 else 0.0,
        min(_count(folded, _MONEY), 8) / 4.0,
        min(folded.count("0:00"), 8) / 4.0,
        min(_count(folded, _MATHS), 12) / 6.0,
        min(folded.count("0") / max(len(folded), 1) * 10.0, 3.0),
        np.log1p(len(first)) / 5.0,
        np.log1p(len(last)) / 5.0,
        float(len(lines) > 2 and len(first) < 200 and len(folded) > 3 * len(first) + 200),
        float(folded.lstrip().startswith(("{", "[", "<", "```", "select ", "def ", "import "))),
    ]


def _dense(window: Window, words: np.ndarray, bigrams: np.ndarray, folded: str) -> np.ndarray:
    """Return the small dense feature vector (bias, length and shape signals)."""
    text = window.user
    counts = _keyword_counts(words, bigrams)
    hard = int(counts[0]) + _cjk_count(text, _HARD_CJK)
    constraints = int(counts[1]) + _cjk_count(text, _CONSTRAINT_CJK)
    return np.array(
        [
            1.0,
            np.log1p(window.user_length) / 5.0,
            np.log1p(text.count("\n")) / 3.0,
            min(hard, 6) / 3.0,
            min(constraints, 12) / 6.0,
            min(_list_items(text), 12) / 6.0,
            float("```" in text),
            min(text.count("?") + text.count("？"), 6) / 3.0,
            np.log1p(len(window.system)) / 5.0,
            *_shape(folded),
        ],
        dtype=np.float32,
    )


@functools.lru_cache(maxsize=SYSTEM_CACHE_SIZE)
def _system_indices(system: str) -> np.ndarray:
    """Return the bucket indices of a system window; cached, since most traffic reuses a few system prompts."""
    points = _codepoints(system)
    words = _word_hashes(points)
    indices = np.concatenate(
        [_word_ngrams(words, _bigram_hashes(words), _SALT_SYSTEM), _char_ngrams(points[:SYSTEM_CHAR_CHARS], _SALT_SYSTEM)]
    )
    indices.setflags(write=False)
    return indices


def _instruction(user_points: np.ndarray) -> np.ndarray:
    """Return the bucket indices of the instruction span: the user turn's first and last characters.

    The ask usually sits before or after any included material, so this span gets its own weights
    (words, word pairs and character 2- to 4-grams) and the material does not drown it out.
    """
    if len(user_points) > INSTRUCTION_HEAD_CHARS + INSTRUCTION_TAIL_CHARS:
        user_points = np.concatenate(
            [user_points[:INSTRUCTION_HEAD_CHARS], _SPACE, user_points[-INSTRUCTION_TAIL_CHARS:]]
        )
    return _span_ngrams(user_points, _SALT_INSTRUCTION)


def _span_ngrams(points: np.ndarray, salt: int) -> np.ndarray:
    """Return the bucket indices of a short span's words, word pairs and character 2- to 4-grams."""
    words = _word_hashes(points)
    return np.concatenate([_word_ngrams(words, _bigram_hashes(words), salt), _char_ngrams(points, salt, (2, 3, 4))])


def ask_of(user: str) -> str:
    """Return the user turn's ask segments: its first line up to any colon or opening quote, and (when the
    turn has several lines) its last line, each at most ASK_CHARS characters.

    The instruction span's fixed character counts take in the start of any material after a short ask
    ("Summarise this in one sentence: <article>"); cutting at the break keeps only the ask's own words.
    """
    head = user[:ASK_CHARS]
    found = _ASK_BREAK.search(head)
    first = head[: found.start()] if found else head
    tail = user.rstrip()[-ASK_CHARS:]
    cut = tail.rfind("\n")
    return first if cut < 0 else f"{first}\n{tail[cut + 1 :]}"


def _ask(user: str) -> np.ndarray:
    """Return the bucket indices of the ask segments: words, word pairs and character 2- to 4-grams."""
    return _span_ngrams(_codepoints(ask_of(user)), _SALT_ASK)


def features_of(window: Window) -> Features:
    """Hash a window into sparse bucket indices and dense signals."""
    user_points = _codepoints(window.user)
    if len(user_points) > CHAR_HEAD_CHARS + CHAR_TAIL_CHARS:
        char_points = np.concatenate([user_points[:CHAR_HEAD_CHARS], _SPACE, user_points[-CHAR_TAIL_CHARS:]])
    else:
        char_points = user_points
    words = _word_hashes(user_points)
    bigrams = _bigram_hashes(words)
    system = _system_indices(window.system) if window.system else np.zeros(0, dtype=np.intp)
    folded = window.user.lower().translate(_DIGITS)
    return Features(
        user_words=_word_ngrams(words, bigrams, 0),
        user_chars=_char_ngrams(char_points, 0),
        instruction=_instruction(user_points),
        system=system,
        ask=_ask(window.user),
        dense=_dense(window, words, bigrams, folded),
    )
