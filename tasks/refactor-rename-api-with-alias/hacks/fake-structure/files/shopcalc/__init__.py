"""shopcalc: cart totals, discounts and receipts, in integer cents."""

from shopcalc.cart import Cart, LineItem, calc_total, compute_total
from shopcalc.discounts import AmountOff, BuyXGetY, PercentOff, best_discount
from shopcalc.money import fmt_money, format_money, to_cents
from shopcalc.receipt import render_receipt

__all__ = [
    "AmountOff",
    "BuyXGetY",
    "Cart",
    "LineItem",
    "PercentOff",
    "best_discount",
    "calc_total",
    "fmt_money",
    "render_receipt",
    "to_cents",
]
