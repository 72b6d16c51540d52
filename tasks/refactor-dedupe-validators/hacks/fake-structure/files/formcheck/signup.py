"""The sign-up form."""

from __future__ import annotations

import re

from formcheck.errors import FieldError
from formcheck.rules import check_email, check_int_range, check_length, require

USERNAME_RE = re.compile(r"[a-z0-9_]+")


def validate_signup(data: dict) -> list[FieldError]:
    errors: list[FieldError] = []
    username = require(data, "username", errors)
    if username is not None and check_length(username, "username", errors, 3, 20):
        if not USERNAME_RE.fullmatch(username):
            errors.append(FieldError("username", "bad_format", "may only contain a-z, 0-9 and _"))
    email = require(data, "email", errors)
    if email is not None:
        check_email(email, "email", errors)
    password = require(data, "password", errors)
    if password is not None:
        check_length(password, "password", errors, min_len=8)
    if str(data.get("age") or "").strip():
        check_int_range(data["age"], "age", errors, 13, 120)
    return errors
