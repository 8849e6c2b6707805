"""Checksums that turn a pattern match into a finding: Luhn, IBAN mod-97, the DNI letter, Verhoeff."""

from __future__ import annotations

import unicodedata

# IBAN lengths of the countries that use one most (a country not listed needs 15-34 characters).
IBAN_LENGTHS = {
    "AD": 24, "AT": 20, "BE": 16, "BG": 22, "CH": 21, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "EE": 20,
    "ES": 24, "FI": 18, "FR": 27, "GB": 22, "GR": 27, "HR": 21, "HU": 28, "IE": 22, "IS": 26, "IT": 27,
    "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MT": 31, "NL": 18, "NO": 15, "PL": 28, "PT": 25,
    "RO": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "TR": 26, "AE": 23, "SA": 24, "IL": 23, "BR": 29,
}
DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"
_VERHOEFF_D = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 2, 3, 4, 0, 6, 7, 8, 9, 5), (2, 3, 4, 0, 1, 7, 8, 9, 5, 6),
    (3, 4, 0, 1, 2, 8, 9, 5, 6, 7), (4, 0, 1, 2, 3, 9, 5, 6, 7, 8), (5, 9, 8, 7, 6, 0, 4, 3, 2, 1),
    (6, 5, 9, 8, 7, 1, 0, 4, 3, 2), (7, 6, 5, 9, 8, 2, 1, 0, 4, 3), (8, 7, 6, 5, 9, 3, 2, 1, 0, 4),
    (9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
)
_VERHOEFF_P = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 5, 7, 6, 2, 8, 3, 0, 9, 4), (5, 8, 0, 3, 7, 9, 6, 1, 4, 2),
    (8, 9, 1, 6, 0, 4, 3, 5, 2, 7), (9, 4, 5, 3, 1, 2, 6, 8, 7, 0), (4, 2, 8, 6, 5, 7, 3, 9, 0, 1),
    (2, 7, 9, 3, 8, 0, 6, 4, 1, 5), (7, 0, 4, 6, 9, 1, 3, 2, 5, 8),
)


def digits_of(text: str) -> str:
    """Return the decimal digits of a match as ASCII digits (`\\d` also matches other scripts' digits: ٤, ４)."""
    if text.isascii():
        return "".join(c for c in text if c.isdigit())
    return "".join(str(unicodedata.decimal(c)) for c in text if c.isdecimal())


def luhn_valid(text: str) -> bool:
    """Return True for 13-19 digits (separators ignored) that pass the Luhn check and are not one digit repeated."""
    digits = digits_of(text)
    if not 13 <= len(digits) <= 19 or len(set(digits)) == 1:
        return False
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if index % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def iban_valid(text: str) -> bool:
    """Return True for an IBAN (spaces ignored) of its country's length whose mod-97 remainder is 1."""
    iban = text.replace(" ", "").upper()
    if not iban.isascii():
        iban = "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in iban)
    expected = IBAN_LENGTHS.get(iban[:2])
    if (expected is not None and len(iban) != expected) or not 15 <= len(iban) <= 34:
        return False
    rearranged = iban[4:] + iban[:4]
    remainder = 0
    for char in rearranged:
        value = ord(char) - 48 if char.isdigit() else ord(char) - 55
        remainder = (remainder * (100 if value > 9 else 10) + value) % 97
    return remainder == 1


def dni_valid(text: str) -> bool:
    """Return True for a Spanish DNI (8 digits) or NIE (X/Y/Z + 7 digits) whose control letter is right."""
    value = text.replace("-", "").upper()
    number, letter = value[:-1], value[-1]
    if number[0] in "XYZ":
        number = str("XYZ".index(number[0])) + number[1:]
    return number.isdigit() and DNI_LETTERS[int(number) % 23] == letter


def verhoeff_valid(text: str) -> bool:
    """Return True for digits (separators ignored) whose Verhoeff check digit is right (Aadhaar)."""
    check = 0
    for index, char in enumerate(reversed(digits_of(text))):
        check = _VERHOEFF_D[check][_VERHOEFF_P[index % 8][ord(char) - 48]]
    return check == 0


# NINO prefixes never issued: first letters D F I Q U V, second letters D F I O Q U V, and these pairs.
_NINO_FIRST_BAD = frozenset("DFIQUV")
_NINO_SECOND_BAD = frozenset("DFIOQUV")
_NINO_PAIRS_BAD = frozenset({"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"})


def nino_valid(text: str) -> bool:
    """Return True for a UK National Insurance number whose two-letter prefix can be issued."""
    first, second = text[0], text[1]
    return first not in _NINO_FIRST_BAD and second not in _NINO_SECOND_BAD and text[:2] not in _NINO_PAIRS_BAD


def ssn_valid(text: str) -> bool:
    """Return True for a US SSN (ddd-dd-dddd) whose area, group and serial can be issued."""
    area, group, serial = text.split("-")
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def phone_valid(text: str) -> bool:
    """Return True when a phone-shaped match has the 8-15 digits of a real number."""
    return 8 <= len(digits_of(text)) <= 15
