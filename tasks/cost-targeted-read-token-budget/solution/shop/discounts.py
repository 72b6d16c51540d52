"""Volume discounts: buying many units of one product lowers its price.

10 units or more of a product: 5% off that line; 25 or more: 10%; 50 or more: 15%.
"""

from __future__ import annotations

#: (minimum quantity, percent off), largest first.
TIERS = ((50, 15), (25, 10), (10, 5))


def percent_for(quantity: int) -> int:
    for minimum, percent in TIERS:
        if quantity >= minimum:
            return percent
    return 0


def line_discount(unit_cents: int, quantity: int) -> int:
    """Cents off one cart line, rounded half up to the cent."""
    return (unit_cents * quantity * percent_for(quantity) + 50) // 100
