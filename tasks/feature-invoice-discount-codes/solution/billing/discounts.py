"""Discount codes: a percentage or a fixed amount off an invoice's subtotal."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from .money import round_cents, to_decimal

KINDS = ("percent", "fixed")


class DiscountError(ValueError):
    """A discount code is invalid or cannot be applied."""


@dataclass(frozen=True)
class DiscountCode:
    code: str
    kind: str
    value: Decimal
    min_subtotal: Decimal = Decimal("0")

    def __post_init__(self) -> None:
        code = self.code.strip().upper()
        if not code:
            raise DiscountError("a discount code needs a name")
        if self.kind not in KINDS:
            raise DiscountError(f"{code}: kind must be one of {', '.join(KINDS)}, not {self.kind!r}")
        value = to_decimal(self.value)
        minimum = to_decimal(self.min_subtotal)
        if self.kind == "percent" and not Decimal("0") < value <= Decimal("100"):
            raise DiscountError(f"{code}: a percentage must be above 0 and at most 100")
        if self.kind == "fixed" and value <= 0:
            raise DiscountError(f"{code}: a fixed discount must be above 0")
        if minimum < 0:
            raise DiscountError(f"{code}: the minimum subtotal cannot be negative")
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "min_subtotal", minimum)

    def amount_for(self, subtotal: Decimal) -> Decimal:
        """What this code takes off `subtotal`: never more than the subtotal itself."""
        if subtotal < self.min_subtotal:
            return Decimal("0.00")
        if self.kind == "percent":
            return round_cents(subtotal * self.value / 100)
        return round_cents(min(self.value, subtotal))
