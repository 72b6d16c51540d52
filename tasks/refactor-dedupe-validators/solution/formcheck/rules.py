"""Field rules shared by every form.

Each rule takes the value (or the submitted data), the field name and the list
of errors found so far; a failing rule appends one FieldError to that list.
"""

from __future__ import annotations

import re

from formcheck.errors import FieldError

EMAIL_RE = re.compile(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}")


def require(data: dict, field: str, errors: list[FieldError]) -> str | None:
    """The field's value as a string, or None (and an error) when it is missing or blank."""
    value = data.get(field)
    if value is None or not str(value).strip():
        errors.append(FieldError(field, "required", "is required"))
        return None
    return str(value)


def check_length(value: str, field: str, errors: list[FieldError], min_len: int = 0, max_len: int | None = None) -> bool:
    if len(value) < min_len:
        errors.append(FieldError(field, "too_short", f"must be at least {min_len} characters"))
        return False
    if max_len is not None and len(value) > max_len:
        errors.append(FieldError(field, "too_long", f"must be at most {max_len} characters"))
        return False
    return True


def check_email(value: str, field: str, errors: list[FieldError]) -> bool:
    if not EMAIL_RE.fullmatch(value.strip()):
        errors.append(FieldError(field, "bad_email", "is not a valid email address"))
        return False
    return True


def check_int_range(value, field: str, errors: list[FieldError], low: int, high: int) -> int | None:
    """The value as an int within low..high, or None (and an error)."""
    try:
        number = int(str(value).strip())
    except ValueError:
        errors.append(FieldError(field, "not_int", "must be a whole number"))
        return None
    if not low <= number <= high:
        errors.append(FieldError(field, "out_of_range", f"must be between {low} and {high}"))
        return None
    return number


def check_choice(value: str, field: str, errors: list[FieldError], choices) -> bool:
    if value not in choices:
        errors.append(FieldError(field, "not_allowed", "must be one of: " + ", ".join(choices)))
        return False
    return True
