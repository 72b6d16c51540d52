"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


import warnings

import shopcalc
from shopcalc import cart as cart_module
from shopcalc import money


def basket():
    cart = shopcalc.Cart()
    cart.add("cap", 1250, qty=2)
    cart.add("tee", 1999)
    return cart


def aliases():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        total = cart_module.calc_total(basket(), tax_rate=10)
        text = money.fmt_money(123456, currency="USD")
    return [total, text, sorted({w.category.__name__ for w in caught}),
            [("compute_total" in str(w.message)) or ("format_money" in str(w.message)) for w in caught]]


def receipt():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return shopcalc.render_receipt(basket(), shopcalc.PercentOff(10), tax_rate=21, currency="EUR",
                                       width=26).splitlines()[-4:]


print(json.dumps({
    "names": see(lambda: [cart_module.compute_total.__name__, money.format_money.__name__]),
    "total": see(lambda: cart_module.compute_total(basket(), shopcalc.AmountOff(500, minimum=1000), 20)),
    "money": see(lambda: money.format_money(250075, currency="GBP")),
    "aliases": see(aliases),
    "all": see(lambda: sorted(set(shopcalc.__all__) & {"calc_total", "fmt_money", "compute_total", "format_money"})),
    "receipt": see(receipt),
}, sort_keys=True))
