"""Money as integer cents: parsing, rounding and formatting."""

from __future__ import annotations

import warnings
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

CURRENCIES = ("EUR", "USD", "GBP")


def to_cents(value) -> int:
    """'12.34', 12.34 or Decimal('12.345') -> cents, rounding half up."""
    if isinstance(value, bool):
        raise TypeError("a bool is not an amount")
    try:
        amount = Decimal(str(value).strip())
    except InvalidOperation:
        raise ValueError(f"not an amount: {value!r}") from None
    return int((amount * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def round_half_up(numerator: int, denominator: int) -> int:
    """numerator / denominator rounded to the nearest int, halves away from zero."""
    if denominator <= 0:
        raise ValueError("denominator must be positive")
    quotient, remainder = divmod(abs(numerator), denominator)
    if 2 * remainder >= denominator:
        quotient += 1
    return quotient if numerator >= 0 else -quotient


def format_money(cents: int, currency: str = "EUR") -> str:
    """1234567 -> '12,345.67 EUR'; negative amounts get a leading minus."""
    if currency not in CURRENCIES:
        raise ValueError(f"unknown currency {currency!r}")
    sign = "-" if cents < 0 else ""
    units, rest = divmod(abs(cents), 100)
    return f"{sign}{units:,}.{rest:02d} {currency}"


def fmt_money(*args, **kwargs):
    warnings.warn("deprecated", DeprecationWarning)
    return format_money(*args, **kwargs)
