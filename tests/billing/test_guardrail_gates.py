"""The gated whole-text scan (billing/guardrails/gates.py) finds exactly what scanning each pattern over the
whole text finds: compared on random texts built to sit on every edge of the gates (findings valid and not,
glued to letters, digits and separators, non-ASCII digits, other scripts), on number-heavy tables, and on the
project's docs and the classifier's multilingual held-out prompts."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from billing.guardrails.detectors import PII, SECRETS
from billing.guardrails.gates import lead_candidates, unicode_digits
from billing.guardrails.scan import Detector, Span, detector_scan, text_scan
from billing.guardrails.validators import DNI_LETTERS, luhn_valid, verhoeff_valid

REPO = Path(__file__).resolve().parents[2]
DETECTORS = (*PII, *SECRETS)
UNICODE_ZEROS = (0x660, 0x966, 0xFF10, 0x6F0)  # Arabic-Indic, Devanagari, fullwidth, extended Arabic-Indic


def reference_scan(pairs: list[tuple[Detector, int]], text: str) -> list[Span]:
    """The straightforward scan: every detector's pattern searched over the whole text, one after the other."""
    spans: list[Span] = []
    for detector, tag in pairs:
        detector_scan(detector, text, 0, final=True,
                      found=lambda s, e, k=detector.kind, t=tag: spans.append(Span(s, e, k, t)))
    return spans


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def _with_check(rng: random.Random, body: str, valid) -> str:  # type: ignore[no-untyped-def]
    for digit in "0123456789":
        if valid(body + digit):
            return body + digit
    return body + "0"


def _iban(rng: random.Random) -> str:
    bban = _digits(rng, 18)
    numeric = int(bban + "131400")  # D=13, E=14, check digits 00
    return f"DE{98 - numeric % 97:02d}{bban}"


def _grouped(rng: random.Random, value: str, size: int = 4) -> str:
    sep = rng.choice(["", " ", "-"])
    return sep.join(value[i:i + size] for i in range(0, len(value), size))


def _finding(rng: random.Random) -> str:
    kind = rng.randrange(16)
    if kind == 0:
        return _grouped(rng, _with_check(rng, rng.choice("3456") + _digits(rng, rng.choice([11, 14, 17])), luhn_valid))
    if kind == 1:
        iban = _iban(rng)
        return " ".join(iban[i:i + 4] for i in range(0, len(iban), 4)) if rng.random() < 0.5 else iban
    if kind == 2:
        number = _digits(rng, 8)
        return f"{number}{rng.choice(['', '-'])}{DNI_LETTERS[int(number) % 23]}"
    if kind == 3:
        first = rng.choice("XYZ")
        number = _digits(rng, 7)
        return f"{first}{number}{DNI_LETTERS[int(str('XYZ'.index(first)) + number) % 23]}"
    if kind == 4:
        sep = rng.choice(["", " "])
        return sep.join([rng.choice(["AB", "CE", "JG", "ZZ", "QQ", "BG"]), _digits(rng, 2), _digits(rng, 2),
                         _digits(rng, 2), rng.choice("ABCDE")])
    if kind == 5:
        return f"{rng.choice(['123', '666', '900', '078'])}-{_digits(rng, 2)}-{_digits(rng, 4)}"
    if kind == 6:
        return _grouped(rng, _with_check(rng, rng.choice("23456789") + _digits(rng, 10), verhoeff_valid))
    if kind == 7:
        return rng.choice(["+44 20 7946 0958", "+1 (555) 123-4567", "+33 1 23 45 67 89", "+4915112345678"])
    if kind == 8:
        return rng.choice(["(555) 123-4567", "555-123-4567", "555.123.4567", "555.123-4567", "(555)123-4567"])
    if kind == 9:
        return rng.choice(["020 7946 0958", "07700 900123", "0121-496-0000", "030 12345678", "0 800 1234"])
    if kind == 10:
        local = rng.choice(["jane.doe", "a", "x_y+tag", "ünïcode", "名前", "a" * 64, "b" * 65, "o'neil"])
        return f"{local}@{rng.choice(['example.com', 'mail.co.uk', 'x', 'ex-ample.org', 'é.fr'])}"
    if kind == 11:
        return rng.choice(["sk-proj-Ab3dEf6hIj9kLm2oPq5sTu8wXy1zAb3dEf6h", "AKIAIOSFODNN7EXAMPLE",
                           "ghp_" + "a1" * 18, "eyJhbGciOi.eyJzdWIiOi.sig"])
    if kind == 12:  # a number in non-ASCII digits, or mixed
        zero = rng.choice(UNICODE_ZEROS)
        value = _finding(rng) if rng.random() < 0.5 else _digits(rng, rng.randint(3, 16))
        return "".join(chr(zero + int(c)) if c.isascii() and c.isdigit() and rng.random() < 0.6 else c for c in value)
    if kind == 13:
        return _digits(rng, rng.randint(1, 20))
    if kind == 14:
        return rng.choice(["AB12", "X1234567", "GB82 WEST 1234 5698 7654 32", "H2O", "A 12", "Z 1234567A"])
    return rng.choice(["1,234.56", "2026-11-30", "v1.2.3", "10:45", "3.14159", "#123", "12/34/5678"])


_GLUE = ["", "", " ", "\n", "a", "Z", "5", "-", ".", "+", "(", ")", "_", "@", "é", "中", "٣", "x-", ": ", "'", "/"]
_WORDS = ["the", "Card", "IBAN", "nº", "tél.", "電話", "номер", "رقم", "क्रमांक", "ID", "ok", "AB", "XY", "ß"]


def random_text(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(1, 40)):
        roll = rng.random()
        if roll < 0.45:
            parts.append(rng.choice(_GLUE) + _finding(rng) + rng.choice(_GLUE))
        elif roll < 0.75:
            parts.append(rng.choice(_WORDS))
        else:
            parts.append(rng.choice(_GLUE))
    return rng.choice(["", " ", "\n"]).join(parts) if rng.random() < 0.3 else " ".join(parts)


def number_table(rng: random.Random) -> str:
    rows = []
    for _ in range(rng.randint(5, 60)):
        cells = [rng.choice([_digits(rng, rng.randint(1, 9)), f"{rng.randint(0, 99999)}.{_digits(rng, 3)}",
                             f"{rng.randint(1, 999):,}", _finding(rng), "—", "n/a"]) for _ in range(rng.randint(2, 7))]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _assert_same(text: str, pairs: list[tuple[Detector, int]]) -> list[Span]:
    fast = text_scan(pairs, text)
    assert fast == reference_scan(pairs, text), text
    return fast


@pytest.mark.parametrize("seed", range(4))
def test_gated_scan_finds_what_the_pattern_by_pattern_scan_finds(seed: int) -> None:
    rng = random.Random(seed)
    pairs = [(d, i) for i, d in enumerate(DETECTORS)]
    kinds: dict[str, int] = {}
    for _ in range(600):
        for span in _assert_same(random_text(rng), pairs):
            kinds[span.kind] = kinds.get(span.kind, 0) + 1
    # the texts exercise every gated kind many times
    for kind in ("email", "phone", "card", "iban", "us_ssn", "uk_nino", "es_dni", "in_aadhaar"):
        assert kinds.get(kind, 0) >= 20, (kind, kinds)


def test_gated_scan_on_number_heavy_tables_and_single_detectors() -> None:
    rng = random.Random(11)
    for _ in range(150):
        text = number_table(rng)
        _assert_same(text, [(d, i) for i, d in enumerate(PII)])
        one = rng.choice(PII)  # a check restricted to some kinds gates a subset of the detectors
        _assert_same(text, [(one, 0)])


def test_gated_scan_on_non_ascii_digits_next_to_every_pattern() -> None:
    rng = random.Random(5)
    pairs = [(d, i) for i, d in enumerate(PII)]
    found = 0
    for _ in range(400):
        zero = rng.choice(UNICODE_ZEROS)
        value = _finding(rng)
        for at in range(len(value)):  # one digit of a finding written in another script, at every place
            if value[at].isascii() and value[at].isdigit():
                text = f"{rng.choice(_GLUE)}{value[:at]}{chr(zero + int(value[at]))}{value[at + 1:]}{rng.choice(_GLUE)}"
                found += len(_assert_same(text, pairs))
                assert unicode_digits(text), text
    assert found > 50


@pytest.mark.parametrize("name", ["docs", "held-out"])
def test_gated_scan_on_real_prompts(name: str) -> None:
    if name == "docs":
        text = "\n\n".join(p.read_text() for p in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))])
    else:
        path = REPO / "routing/classifier/data/heldout_v2.jsonl"
        if not path.exists():
            pytest.skip(f"{path} is not in this checkout")
        text = path.read_text()
    rng = random.Random(3)
    for _ in range(30):  # the text with findings planted at random places
        at = rng.randrange(len(text))
        text = f"{text[:at]}{_finding(rng)}{text[at:]}"
    _assert_same(text, [(d, i) for i, d in enumerate(DETECTORS)])


def test_the_gates_leave_few_candidates_in_prose() -> None:
    text = ("Our 2026 plan: 12 teams, 3 offices, revenue up 40% since 2019; call Anna on Monday. " * 200
            + "card 4111 1111 1111 1111, IBAN GB82 WEST 1234 5698 7654 32, mail jane@example.com")
    candidates = lead_candidates({"digits", "upper", "email"}, text)
    # the card's and the IBAN's groups (a run then a space and a digit), and around the IBAN's capitals
    assert text.index("4111") in candidates["digits"] and len(candidates["digits"]) == 6, candidates
    assert text.index("GB82") in candidates["upper"] and len(candidates["upper"]) <= 6, candidates
    assert candidates["email"] == [text.index("jane@")]


@pytest.mark.parametrize("other_script_key", [False, True])
def test_the_blocklist_prefilter_finds_what_its_whole_pattern_finds_in_mixed_scripts(other_script_key: bool) -> None:
    from billing.guardrails.blocklist import blocklist_detector

    phrases = ("acme merger", "project falcon", "x-ray", "c++", "Über plan") + (("naïve plan", "東京 office")
                                                                                if other_script_key else ())
    full = blocklist_detector(phrases)
    rng = random.Random(17)
    words = ["acme", "ACME", "merger", "Merger", "project", "falcon", "x-ray", "c++", "über", "ÜBER", "plan",
             "naïve", "NAÏVE", "東京", "office", "«acme»", "acme’s", "«merger»", "mergers", "projectfalcon", "é",
             "中文", "الدمج", "слияние", "\n", "  ", ",", "acme-merger", "Acme\u00a0merger"]
    hits = 0
    for _ in range(400):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 40)))
        narrowed = text_scan([(full, 0)], text)
        plain = [m.span() for m in full.pattern.finditer(text)]
        assert [(s.start, s.end) for s in narrowed] == plain, text
        hits += bool(plain)
    assert hits > 150


def test_no_character_below_arabic_indic_zero_is_a_non_ascii_digit() -> None:
    import regex

    # unicode_digits skips everything below U+0660; \d must match nothing there but 0-9.
    assert [c for c in range(0x660) if regex.match(r"\d", chr(c))] == list(range(0x30, 0x3A))
    assert regex.match(r"\d", "\u0660")
    text = "a ٣ b ४ c ０ d ߀ e 𝟘"
    assert unicode_digits(text) == [text.index(c) for c in "٣४０߀𝟘"]


@pytest.mark.parametrize("filler", ["plain English prose with a dash — or two. ", "中文的句子，还有标点。 हिन्दी वाक्य। "])
def test_non_ascii_digits_are_found_in_sparse_and_dense_other_scripts(filler: str) -> None:
    import regex

    rng = random.Random(9)
    for _ in range(50):
        parts = [filler * rng.randint(1, 30)]
        for _ in range(rng.randint(0, 5)):
            parts.append(chr(rng.choice(UNICODE_ZEROS) + rng.randrange(10)) + filler * rng.randint(0, 3))
        text = "".join(parts)
        expected = [i for i, c in enumerate(text) if regex.match(r"\d", c) and not c.isascii()]
        assert unicode_digits(text) == expected
