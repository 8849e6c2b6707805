"""The detectors of the built-in checks: PII and secrets. Every pattern is bounded (see scan.py)."""

from __future__ import annotations

from .scan import Detector, detector
from .validators import dni_valid, iban_valid, luhn_valid, nino_valid, phone_valid, ssn_valid, verhoeff_valid

# Patterns start with a plain character class, with digits written out (\d\d\d, not \d{3}), and what may not
# precede them is checked on the candidates (not_after): the regex module then skips quickly to candidate
# positions, several times faster on digit-heavy text than with a leading lookbehind.
_NUMBER_BEFORE = r"[\w+.-]|\+\d{1,3}[ .-]?"  # part of a longer or an international number
PII: tuple[Detector, ...] = (
    detector("email", r"(?<![\w.%+-])[\w.%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}(?![\w-])",
             max_len=64 + 1 + 64 * 8 + 24, required=("@",), lead="email"),
    # +44 20 7946 0958, +1 (555) 123-4567
    detector("phone", r"\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}(?![\w-])", not_after=r"[\w+.-]", max_len=40,
             valid=phone_valid, required=("+",), lead="plus"),
    # (555) 123-4567
    detector("phone", r"\(\d\d\d\)[ .-]?\d\d\d[.-]\d\d\d\d(?![\w-])", not_after=r"[\w+.-]", max_len=14,
             required=("(",)),
    # 555-123-4567, 555.123.4567
    detector("phone", r"\d\d\d(?P<sep>[.-])\d\d\d(?P=sep)\d\d\d\d(?![\w-])", not_after=_NUMBER_BEFORE, max_len=12,
             lead="digits"),
    # national numbers with a trunk 0: 020 7946 0958, 07700 900123
    detector("phone", r"0\d{2,4}[ -]\d{3,4}[ -]?\d{3,4}(?![\w-])", not_after=_NUMBER_BEFORE, max_len=16,
             valid=phone_valid, lead="digits"),
    detector("card", r"\d\d\d\d(?:[ -]?\d){9,15}(?![\w-])", not_after=r"[\w-]", max_len=19 * 2, valid=luhn_valid,
             lead="digits"),
    detector("iban", r"[A-Z][A-Z]\d\d(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?(?![A-Za-z0-9])",
             not_after=r"[A-Za-z0-9]", max_len=4 + 8 * 5, valid=iban_valid, lead="upper"),
    detector("us_ssn", r"\d\d\d-\d\d-\d\d\d\d(?![\w-])", not_after=r"[\w-]", max_len=11, valid=ssn_valid, lead="digits"),
    detector("uk_nino", r"[A-Z][A-Z] ?\d\d ?\d\d ?\d\d ?[A-D](?![A-Za-z0-9])", not_after=r"[A-Za-z0-9]",
             max_len=13, valid=nino_valid, lead="upper"),
    detector("es_dni", r"\d\d\d\d\d\d\d\d-?[A-Z](?![A-Za-z0-9])", not_after=r"[A-Za-z0-9]", max_len=10,
             valid=dni_valid, lead="digits"),
    detector("es_dni", r"[XYZ]\d\d\d\d\d\d\d-?[A-Z](?![A-Za-z0-9])", not_after=r"[A-Za-z0-9]", max_len=10,
             valid=dni_valid, lead="upper"),
    detector("in_aadhaar", r"[2-9]\d\d\d[ -]?\d\d\d\d[ -]?\d\d\d\d(?![\w-])", not_after=r"[\w-]", max_len=14,
             valid=verhoeff_valid, lead="digits"),
)

SECRETS: tuple[Detector, ...] = (
    detector("anthropic_key", r"sk-ant-[A-Za-z0-9_-]{20,300}", max_len=307, required=("sk-ant-",)),
    detector("openai_key", r"(?<![\w-])sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,300}",
             max_len=311, required=("sk-",)),
    detector("aws_access_key", r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])", max_len=20,
             required=("AKIA", "ASIA", "ABIA", "ACCA")),
    detector("aws_secret_key",
             r"(?i:aws_?secret_?access_?key)[\"']?\s{0,4}[:=]\s{0,4}[\"']?[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])",
             max_len=80, required=("ecret", "ECRET")),
    detector("github_token", r"(?<![\w])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})",
             max_len=266, required=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    detector("slack_token", r"(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,250}", max_len=255, required=("xox",)),
    detector("google_api_key", r"AIza[0-9A-Za-z_-]{35}", max_len=39, required=("AIza",)),
    detector("stripe_key", r"(?<![\w])(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,250}", max_len=258,
             required=("_live_", "_test_")),
    detector(
        "private_key",
        r"-----BEGIN[A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:\r?\n[A-Za-z-]{1,20}:[^\n]{0,100}){0,4}"  # encrypted keys' Proc-Type / DEK-Info headers
        r"[A-Za-z0-9+/=\r\n]{0,12000}"
        r"(?:-----END[A-Z ]{0,40}PRIVATE KEY(?: BLOCK)?-----)?",
        max_len=12_000 + 4 * 123 + 2 * 62, required=("PRIVATE KEY",),
    ),
    detector("jwt", r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,2000}\.eyJ[A-Za-z0-9_-]{8,4000}\.[A-Za-z0-9_-]{0,1000}",
             max_len=7012, required=("eyJ",)),
)

PII_KINDS = tuple(dict.fromkeys(d.kind for d in PII))
SECRET_KINDS = tuple(dict.fromkeys(d.kind for d in SECRETS))
