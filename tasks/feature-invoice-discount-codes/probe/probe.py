"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


from decimal import Decimal

from billing import Invoice, LineItem, render_text
from billing.discounts import DiscountCode, DiscountError


def percent():
    inv = Invoice("P-1")
    inv.add(LineItem("MUG", "Mug", "7.35"))
    inv.apply_discount(DiscountCode("tenoff", "percent", "10"))
    return [str(inv.discount), str(inv.total), inv.to_dict()["discount_code"]]


def fixed_taxed():
    inv = Invoice("P-2", region="NY")
    inv.add(LineItem("RUG", "Rug", "55.55"))
    inv.add(LineItem("GIFT", "Gift card", "20.00", taxable=False))
    inv.apply_discount(DiscountCode("SAVE7", "fixed", "7.00"))
    return [str(inv.discount), str(inv.tax), str(inv.total)]


def lapsing():
    inv = Invoice("P-3", region="TX")
    inv.add(LineItem("TV", "Television", "300.00"))
    inv.add(LineItem("CABLE", "Cable", "15.00"))
    inv.apply_discount(DiscountCode("BIG", "fixed", "30", min_subtotal="310"))
    before = str(inv.total)
    inv.remove("CABLE")
    lines = [line for line in render_text(inv).splitlines() if line.startswith("Discount")]
    return [before, str(inv.discount), str(inv.total), inv.to_dict()["discount"], lines]


def second_code():
    inv = Invoice("P-4")
    inv.add(LineItem("HAT", "Hat", "18.00"))
    inv.apply_discount(DiscountCode("ONE", "fixed", "2"))
    try:
        inv.apply_discount(DiscountCode("TWO", "fixed", "3"))
        refused = False
    except DiscountError:
        refused = True
    inv.remove_discount()
    inv.apply_discount(DiscountCode(" quarter ", "percent", "25"))
    return [refused, inv.to_dict()["discount_code"], str(inv.total)]


def invalid():
    out = []
    for args in (("", "fixed", "1"), ("X", "percent", "101"), ("X", "fixed", "0"), ("X", "bogus", "1")):
        try:
            DiscountCode(*args)
            out.append("accepted")
        except DiscountError:
            out.append("refused")
    return out


print(json.dumps({"percent": see(percent), "fixed_taxed": see(fixed_taxed), "lapsing": see(lapsing),
                  "second_code": see(second_code), "invalid": see(invalid)}, sort_keys=True))
