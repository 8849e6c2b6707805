"""Guardrail checks: what each detector finds, the config validator, results, and streamed redaction."""

from __future__ import annotations

import random

import pytest

from billing.guardrails import (
    GuardrailBlocked,
    GuardrailConfigError,
    StreamGuard,
    guardrail_config_parse,
    guardrails_compile,
    messages_check,
    texts_check,
)
from billing.guardrails.blocklist import blocklist_detector
from billing.guardrails.scan import text_scan
from billing.guardrails.validators import dni_valid, iban_valid, luhn_valid, verhoeff_valid

OPENAI_KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2oPq5sTu8wXy1z" * 2
ANTHROPIC_KEY = "sk-ant-api03-" + "x" * 90 + "AA"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq1xZ9w0mNq\nQx2Lk8f3u9pQ==\n"
       "-----END RSA PRIVATE KEY-----")


def _checks(config: dict, where: str = "input"):  # type: ignore[no-untyped-def]
    compiled = guardrails_compile(guardrail_config_parse(config))
    return compiled.input if where == "input" else compiled.output


def _found(check: str, text: str, **extra: object) -> dict[str, int]:
    outcome = texts_check([text], _checks({"input": [{"check": check, "action": "flag"}], **extra}))
    return outcome.results[0].as_dict()["kinds"]


@pytest.mark.parametrize(("text", "kind"), [
    ("write to jane.doe+news@mail.example.co.uk today", "email"),
    ("call +44 20 7946 0958 now", "phone"),
    ("call (555) 123-4567 now", "phone"),
    ("call 555-123-4567 now", "phone"),
    ("ring 07700 900123 tonight", "phone"),
    ("card 4111 1111 1111 1111 exp", "card"),
    ("card 5500-0000-0000-0004 exp", "card"),
    ("pay GB82 WEST 1234 5698 7654 32 now", "iban"),
    ("pay DE89370400440532013000 now", "iban"),
    ("ssn 123-45-6789 ok", "us_ssn"),
    ("nino AB 12 34 56 C ok", "uk_nino"),
    ("nino AB123456D ok", "uk_nino"),
    ("dni 12345678Z ok", "es_dni"),
    ("nie X1234567L ok", "es_dni"),
    ("aadhaar 2363 4567 8900", None),  # checked below: Verhoeff decides
])
def test_pii_kinds_are_found(text: str, kind: str | None) -> None:
    if kind is None:
        return
    assert _found("pii", text) == {kind: 1}


@pytest.mark.parametrize("text", [
    "released on 2024-01-15, version 1.2.3.4",
    "card 4111 1111 1111 1112 exp",  # fails Luhn
    "pay GB82 WEST 1234 5698 7654 33 now",  # fails mod-97
    "ssn 000-12-3456 and 666-12-3456",
    "dni 12345678A",  # wrong letter
    "order 1234 5678 9012 shipped",  # not a valid Aadhaar (Verhoeff)
    "mail me at john at example dot com",
])
def test_pii_lookalikes_are_not_found(text: str) -> None:
    assert _found("pii", text) == {}


def test_an_aadhaar_number_is_found_only_with_its_verhoeff_digit() -> None:
    base = "23412341234"
    valid = [d for d in "0123456789" if verhoeff_valid(base + d)]
    assert len(valid) == 1
    number = f"{base[:4]} {base[4:8]} {base[8:]}{valid[0]}"
    assert _found("pii", f"aadhaar {number} here") == {"in_aadhaar": 1}


def test_checksums() -> None:
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    assert not luhn_valid("0000000000000000")  # one digit repeated
    assert iban_valid("GB82 WEST 1234 5698 7654 32") and not iban_valid("GB82 WEST 1234 5698 7654")
    assert dni_valid("12345678Z") and dni_valid("X1234567L") and not dni_valid("12345678A")
    assert verhoeff_valid("2363") and not verhoeff_valid("2364")  # Verhoeff's own example: 236 -> 3


@pytest.mark.parametrize(("secret", "kind"), [
    (OPENAI_KEY, "openai_key"),
    ("sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0uvwx", "openai_key"),
    (ANTHROPIC_KEY, "anthropic_key"),
    ("AKIAIOSFODNN7EXAMPLE", "aws_access_key"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_key"),
    ("ghp_" + "a" * 36, "github_token"),
    ("github_pat_" + "11ABCDEFG0" * 4, "github_token"),
    ("xoxb-1234567890-abcdefghij", "slack_token"),
    ("AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "google_api_key"),
    ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "stripe_key"),
    (PEM, "private_key"),
    (JWT, "jwt"),
])
def test_secret_kinds_are_found_and_redacted(secret: str, kind: str) -> None:
    text = f"here it is: {secret} -- keep it safe"
    outcome = texts_check([text], _checks({"input": [{"check": "secrets", "action": "redact"}]}))
    assert outcome.results[0].as_dict()["kinds"] == {kind: 1}
    assert outcome.texts[0] == f"here it is: [REDACTED:{kind}] -- keep it safe"


def test_results_never_carry_the_matched_text() -> None:
    outcome = texts_check([f"key {OPENAI_KEY} mail a@b.example"],
                          _checks({"input": [{"check": "secrets", "action": "flag"}, {"check": "pii", "action": "flag"}]}))
    record = repr([r.as_dict() for r in outcome.results])
    assert OPENAI_KEY not in record and "a@b.example" not in record
    assert [r.as_dict() for r in outcome.results] == [
        {"check": "secrets", "where": "input", "action": "flag", "count": 1, "kinds": {"openai_key": 1}},
        {"check": "pii", "where": "input", "action": "flag", "count": 1, "kinds": {"email": 1}},
    ]
    assert outcome.texts[0] == f"key {OPENAI_KEY} mail a@b.example"  # flag leaves the text as it is


def test_blocklist_matches_whole_words_case_insensitively() -> None:
    extra = {"blocklist": ["Project Falcon", "acme", "c++"]}
    assert _found("blocklist", "About PROJECT\n falcon and Acme.", **extra) == {"blocklist": 2}
    assert _found("blocklist", "falconry at acmes, projectfalcon", **extra) == {}
    assert _found("blocklist", "we write C++ here", **extra) == {"blocklist": 1}
    assert _found("blocklist", "Über «acme» café", **extra) == {"blocklist": 1}


@pytest.mark.parametrize("other_script_key", [True, False])
def test_blocklist_prefilter_finds_what_the_whole_pattern_finds(other_script_key: bool) -> None:
    phrases = tuple(f"word{i} thing" for i in range(200)) + ("acme", "x-ray", "ACME corp")
    phrases += ("naïve plan",) if other_script_key else ("plan",)
    full = blocklist_detector(phrases)
    rng = random.Random(7)
    vocabulary = ["acme", "ACME", "corp", "naïve", "NAÏVE", "plan", "x-ray", "x", "ray", "word3", "thing",
                  "Word199", "things", "«acme»", "acme’s", ",", ".", "\n", "  "]
    hits = 0
    for _ in range(300):
        text = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(1, 30)))
        narrowed = text_scan([(full, 0)], text)
        plain = [m.span() for m in full.pattern.finditer(text)]
        assert [(s.start, s.end) for s in narrowed] == plain, text
        hits += bool(plain)
    assert hits > 100


def test_config_errors_say_where_and_why() -> None:
    with pytest.raises(GuardrailConfigError) as caught:
        guardrail_config_parse({
            "input": [{"check": "pii", "action": "shout"}, {"check": "dna", "action": "flag", "price_micros": -1},
                      {"action": "flag"}, "pii", {"check": "pii", "action": "flag", "kinds": ["email", "shoe"]}],
            "output": {"check": "pii"},
            "blocklist": ["ok", ""],
            "extra": 1,
        })
    errors = caught.value.errors
    assert "guardrails: unknown field extra (allowed: input, output, blocklist)" in errors
    assert "input[0].action: must be one of flag, redact, block (got 'shout')" in errors
    assert "input[1].check: must be one of pii, secrets, blocklist (got 'dna')" in errors
    assert "input[1].price_micros: must be an integer from 0 to 1000000 (got -1)" in errors
    assert "input[2].check: is required" in errors
    assert "input[3]: must be an object with check, action and price_micros" in errors
    assert any(e.startswith("input[4].kinds: unknown pii kind 'shoe'") for e in errors)
    assert "output: must be a list of checks" in errors
    assert any(e.startswith("blocklist[1]: must be a phrase") for e in errors)


def test_config_refuses_a_check_twice_and_a_blocklist_check_without_phrases() -> None:
    with pytest.raises(GuardrailConfigError) as caught:
        guardrail_config_parse({"input": [{"check": "pii", "action": "flag"}, {"check": "pii", "action": "block"},
                                          {"check": "blocklist", "action": "block"}]})
    assert caught.value.errors == ("input[1].check: pii is already enabled on the input",
                                   "input[2].check: the blocklist check needs phrases in blocklist")


def test_config_round_trips_and_compiles_once() -> None:
    raw = {"input": [{"check": "pii", "action": "redact", "price_micros": 50, "kinds": ["email"]}],
           "output": [{"check": "blocklist", "action": "block", "price_micros": 5}], "blocklist": ["Acme", "acme", "Foo  bar"]}
    config = guardrail_config_parse(raw)
    assert config.blocklist == ("Acme", "Foo bar")
    assert guardrail_config_parse(config.as_dict()) == config
    assert guardrails_compile(config) is guardrails_compile(guardrail_config_parse(raw))
    assert [(c.check, c.where, c.price_micros) for c in guardrails_compile(config).charges()] == [
        ("pii", "input", 50), ("blocklist", "output", 5)]


def test_a_blocking_input_check_names_itself() -> None:
    messages = [{"role": "user", "content": f"my key is {OPENAI_KEY}"}]
    _, outcome = messages_check(messages, _checks({"input": [{"check": "pii", "action": "redact"},
                                                             {"check": "secrets", "action": "block", "price_micros": 9}]}))
    with pytest.raises(GuardrailBlocked) as caught:
        outcome.raise_if_blocked()
    assert (caught.value.status, caught.value.code, caught.value.param) == (400, "guardrail_blocked", "messages")
    assert caught.value.message == "The request was blocked by the guardrail check 'secrets' on the input (openai_key)."
    assert [(c.check, c.price_micros) for c in outcome.charges] == [("pii", 0), ("secrets", 9)]


def test_messages_are_redacted_in_strings_and_text_parts_and_left_alone_otherwise() -> None:
    image = {"type": "image_url", "image_url": {"url": "https://x.example/a.png"}}
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "mail bob@corp.example"}, image]},
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "user", "content": "and call 555-123-4567"},
    ]
    forwarded, outcome = messages_check(messages, _checks({"input": [{"check": "pii", "action": "redact"}]}))
    assert forwarded[0] is messages[0] and forwarded[2] is messages[2]
    assert forwarded[1]["content"] == [{"type": "text", "text": "mail [REDACTED:email]"}, image]
    assert forwarded[3]["content"] == "and call [REDACTED:phone]"
    assert messages[3]["content"] == "and call 555-123-4567"  # the request's own messages are not changed
    assert outcome.results[0].count == 2


SAMPLE = (
    f"Sure. Mail jane.doe@example.com or call +44 20 7946 0958 or (555) 123-4567. Card 4111 1111 1111 1111, "
    f"IBAN GB82 WEST 1234 5698 7654 32, SSN 123-45-6789, NINO AB 12 34 56 C, DNI 12345678Z. "
    f"Keys: {OPENAI_KEY}, AKIAIOSFODNN7EXAMPLE, ghp_{'a' * 36}, {JWT}.\n{PEM}\nAbout Project  Falcon at ACME: done."
)
STREAM_CONFIG = {"output": [{"check": "pii", "action": "redact"}, {"check": "secrets", "action": "redact"},
                            {"check": "blocklist", "action": "redact"}], "blocklist": ["project falcon", "acme"]}


def _streamed(checks, pieces: list[str], every: int = 1) -> tuple[str, StreamGuard]:  # type: ignore[no-untyped-def]
    guard = StreamGuard(checks, scan_every_chars=every)
    out = "".join(guard.feed(piece) for piece in pieces) + guard.finish()
    return out, guard


def test_streamed_redaction_is_the_same_at_every_split_point() -> None:
    checks = _checks(STREAM_CONFIG, "output")
    whole = texts_check([SAMPLE], checks)
    assert whole.texts[0].count("[REDACTED:") == 15
    for split in range(len(SAMPLE) + 1):
        out, guard = _streamed(checks, [SAMPLE[:split], SAMPLE[split:]])
        assert out == whole.texts[0], split
        assert guard.results() == whole.results, split


def test_streamed_redaction_is_the_same_one_character_at_a_time_and_in_random_chunks() -> None:
    checks = _checks({**STREAM_CONFIG, "output": [*STREAM_CONFIG["output"][:2],
                                                  {"check": "blocklist", "action": "flag"}]}, "output")
    whole = texts_check([SAMPLE], checks)
    assert _streamed(checks, list(SAMPLE))[0] == whole.texts[0]
    rng = random.Random(13)
    for _ in range(200):
        cuts = sorted(rng.sample(range(1, len(SAMPLE)), rng.randint(1, 40)))
        pieces = [SAMPLE[a:b] for a, b in zip([0, *cuts], [*cuts, len(SAMPLE)], strict=True)]
        out, guard = _streamed(checks, pieces, every=rng.choice([1, 48]))
        assert out == whole.texts[0]
        assert guard.results() == whole.results


def test_stream_releases_safe_text_before_the_answer_ends() -> None:
    guard = StreamGuard(_checks(STREAM_CONFIG, "output"), scan_every_chars=1)
    assert guard.feed("Hello there, ") == "Hello there, "
    released = guard.feed("write to jane.doe@exa")
    assert released == "write to "  # the address may still grow: held
    assert guard.feed("mple.com please") == "[REDACTED:email] "
    assert guard.finish() == "please"


def test_stream_holds_no_more_than_the_longest_pattern() -> None:
    checks = _checks({"output": [{"check": "pii", "action": "redact"}]}, "output")
    guard = StreamGuard(checks)
    released = "".join(guard.feed("1234 ") for _ in range(400))  # scans every 48 characters: holds that too  # digits that keep looking like a card
    assert len("1234 " * 400) - len(released) <= max(d.max_len for c in checks for d in c.detectors) + 48


def test_a_blocking_output_check_stops_the_stream_before_the_finding() -> None:
    guard = StreamGuard(_checks({"output": [{"check": "secrets", "action": "block"}]}, "output"), scan_every_chars=1)
    released = guard.feed("The key is ") + guard.feed(OPENAI_KEY[:20]) + guard.feed(OPENAI_KEY[20:] + " ok")
    assert released == "The key is "
    assert guard.blocked is not None and guard.blocked.check == "secrets"
    assert guard.feed("more") == "" and guard.finish() == ""
