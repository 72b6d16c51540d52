"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


from decimal import Decimal

from invoicing import Invoice, LineItem
from invoicing.money import format_amount, round_cents


def invoice():
    inv = Invoice("2024-0200", "Globex")
    inv.add("badge", "0.50", 5)
    inv.add("poster", "2.50", vat_category="reduced")
    return {"vat": str(inv.vat_total), "last": inv.render().splitlines()[-1]}


print(json.dumps({
    "round": see(lambda: [str(round_cents(Decimal(v))) for v in ("0.015", "2.675", "-0.125", "3.333", "9.995")]),
    "discounted": see(lambda: str(LineItem("flyer", "6.45", 1, discount_pct=50).net)),
    "vat": see(lambda: [str(LineItem("pin", "0.50").vat), str(LineItem("book", "2.50", vat_category="reduced").vat)]),
    "credit": see(lambda: str(LineItem("refund", "2.50", -1).vat)),
    "format": see(lambda: format_amount(Decimal("-9876.545"))),
    "invoice": see(invoice),
}, sort_keys=True))
