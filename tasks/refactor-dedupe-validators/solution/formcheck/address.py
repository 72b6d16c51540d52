"""The delivery address form."""

from __future__ import annotations

import re

from formcheck.errors import FieldError
from formcheck.rules import check_choice, check_length, require

COUNTRIES = ("BE", "DE", "FR", "NL")
POSTCODE_RE = {
    "BE": re.compile(r"\d{4}"),
    "DE": re.compile(r"\d{5}"),
    "FR": re.compile(r"\d{5}"),
    "NL": re.compile(r"\d{4} ?[A-Z]{2}"),
}


def validate_address(data: dict) -> list[FieldError]:
    errors: list[FieldError] = []
    name = require(data, "name", errors)
    if name is not None:
        check_length(name, "name", errors, max_len=60)
    street = require(data, "street", errors)
    if street is not None:
        check_length(street, "street", errors, 3, 80)
    city = require(data, "city", errors)
    if city is not None:
        check_length(city, "city", errors, max_len=40)
    country = require(data, "country", errors)
    known = country is not None and check_choice(country.upper(), "country", errors, COUNTRIES)
    postcode = require(data, "postcode", errors)
    if postcode is not None and known:
        if not POSTCODE_RE[country.upper()].fullmatch(postcode.strip().upper()):
            errors.append(FieldError("postcode", "bad_format", f"is not a valid {country.upper()} postcode"))
    return errors
