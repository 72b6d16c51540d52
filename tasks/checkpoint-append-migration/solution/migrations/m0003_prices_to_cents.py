"""Prices as whole cents instead of decimal euros: "12.50" becomes "1250"."""

from decimal import ROUND_HALF_UP, Decimal

FIELDS = ["sku", "name", "price", "qty"]


def apply(rows):
    migrated = []
    for row in rows:
        cents = (Decimal(row["price"]) * 100).quantize(Decimal(1), rounding=ROUND_HALF_UP)
        migrated.append({**row, "price": str(int(cents))})
    return migrated
