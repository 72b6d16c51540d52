"""The cart and its total."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from shopcalc.money import round_half_up


@dataclass
class LineItem:
    sku: str
    unit_cents: int
    qty: int = 1

    @property
    def cents(self) -> int:
        return self.unit_cents * self.qty


class Cart:
    """Line items keyed by SKU, in the order they were first added."""

    def __init__(self) -> None:
        self._lines: dict[str, LineItem] = {}

    def add(self, sku: str, unit_cents: int, qty: int = 1) -> None:
        if qty < 1:
            raise ValueError("qty must be at least 1")
        if unit_cents < 0:
            raise ValueError("price cannot be negative")
        line = self._lines.get(sku)
        if line is None:
            self._lines[sku] = LineItem(sku, unit_cents, qty)
        elif line.unit_cents != unit_cents:
            raise ValueError(f"{sku} is already in the cart at a different price")
        else:
            line.qty += qty

    def remove(self, sku: str, qty: int | None = None) -> None:
        """Remove `qty` units of `sku` (all of them when qty is None)."""
        line = self._lines.get(sku)
        if line is None:
            raise KeyError(sku)
        if qty is None or qty >= line.qty:
            del self._lines[sku]
        else:
            line.qty -= qty

    def line(self, sku: str) -> LineItem | None:
        return self._lines.get(sku)

    def lines(self) -> list[LineItem]:
        return list(self._lines.values())

    def subtotal(self) -> int:
        return sum(line.cents for line in self._lines.values())

    def __len__(self) -> int:
        return sum(line.qty for line in self._lines.values())


def compute_total(cart: Cart, discount=None, tax_rate: int = 0) -> int:
    """Subtotal, less the discount, plus `tax_rate` percent tax (rounded half up), in cents."""
    if tax_rate < 0:
        raise ValueError("tax_rate cannot be negative")
    reduction = discount.reduction(cart) if discount is not None else 0
    net = cart.subtotal() - reduction
    return net + round_half_up(net * tax_rate, 100)


def calc_total(*args, **kwargs):
    warnings.warn("deprecated", DeprecationWarning)
    return compute_total(*args, **kwargs)
