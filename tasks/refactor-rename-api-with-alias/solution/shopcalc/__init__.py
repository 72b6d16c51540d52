"""shopcalc: cart totals, discounts and receipts, in integer cents."""

from shopcalc.cart import Cart, LineItem, calc_total, compute_total
from shopcalc.discounts import AmountOff, BuyXGetY, PercentOff, best_discount
from shopcalc.money import fmt_money, format_money, to_cents
from shopcalc.receipt import render_receipt

# calc_total and fmt_money are deprecated aliases: still importable, no longer in __all__.
__all__ = [
    "AmountOff",
    "BuyXGetY",
    "Cart",
    "LineItem",
    "PercentOff",
    "best_discount",
    "compute_total",
    "format_money",
    "render_receipt",
    "to_cents",
]
