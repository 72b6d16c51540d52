"""Plain-text receipts."""

from __future__ import annotations

from shopcalc.cart import compute_total
from shopcalc.money import format_money


def _row(label: str, amount: str, width: int) -> str:
    gap = max(1, width - len(label) - len(amount))
    return label + " " * gap + amount


def render_receipt(cart, discount=None, tax_rate: int = 0, currency: str = "EUR", width: int = 32) -> str:
    """One row per line item, then subtotal, discount, tax and total."""
    rows = [_row(f"{line.qty} x {line.sku}", format_money(line.cents, currency), width) for line in cart.lines()]
    rows.append("-" * width)
    subtotal = cart.subtotal()
    rows.append(_row("Subtotal", format_money(subtotal, currency), width))
    reduction = discount.reduction(cart) if discount is not None else 0
    if reduction:
        rows.append(_row("Discount", format_money(-reduction, currency), width))
    total = compute_total(cart, discount, tax_rate)
    if tax_rate:
        rows.append(_row(f"Tax {tax_rate}%", format_money(total - (subtotal - reduction), currency), width))
    rows.append(_row("Total", format_money(total, currency), width))
    return "\n".join(rows)
