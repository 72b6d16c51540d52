"""An invoice: line items for one customer, with tax and a total."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from .discounts import DiscountCode, DiscountError
from .items import LineItem
from .money import round_cents
from .tax import rate_for, tax_on


class Invoice:
    def __init__(self, number: str, region: str = "NONE") -> None:
        self.number = number
        self.region = region.upper()
        self.rate = rate_for(region)
        self._items: list[LineItem] = []
        self.discount_code: DiscountCode | None = None

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

    def apply_discount(self, code: DiscountCode) -> None:
        """Attach a discount code: one per invoice, and only if the subtotal reaches its minimum."""
        if self.discount_code is not None:
            raise DiscountError(f"invoice {self.number} already has code {self.discount_code.code}")
        if self.subtotal < code.min_subtotal:
            raise DiscountError(f"{code.code} needs a subtotal of at least {code.min_subtotal}")
        self.discount_code = code

    def remove_discount(self) -> None:
        self.discount_code = None

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
    def discount(self) -> Decimal:
        if self.discount_code is None:
            return Decimal("0.00")
        return self.discount_code.amount_for(self.subtotal)

    @property
    def tax(self) -> Decimal:
        taxable = self.taxable_subtotal
        subtotal = self.subtotal
        if subtotal:
            # The discount lowers the taxable part in proportion to its share of the subtotal.
            taxable -= round_cents(self.discount * taxable / subtotal)
        return tax_on(taxable, self.rate)

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
            "discount": str(self.discount),
            "tax": str(self.tax),
            "total": str(self.total),
        }
