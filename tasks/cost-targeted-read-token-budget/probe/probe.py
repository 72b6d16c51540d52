"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


from shop.cart import Cart
from shop.catalog import in_category, product
from shop.discounts import line_discount, percent_for


def cart():
    skus = in_category("kitchen")[3:6]
    basket = Cart()
    for sku, qty in zip(skus, (25, 50, 10)):
        basket.add(sku, qty)
    return basket.discount()


print(json.dumps({
    "percent": see(lambda: [percent_for(q) for q in (0, 9, 10, 24, 25, 26, 49, 50, 51, 100)]),
    "lines": see(lambda: [line_discount(1999, 50), line_discount(250, 25), line_discount(40, 10)]),
    "cart": see(cart),
}, sort_keys=True))
