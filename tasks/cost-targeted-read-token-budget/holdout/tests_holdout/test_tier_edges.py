import pytest

from shop.cart import Cart
from shop.catalog import in_category, product
from shop.discounts import line_discount, percent_for


@pytest.mark.parametrize("quantity", range(0, 61))
def test_every_quantity(quantity):
    expected = 15 if quantity >= 50 else 10 if quantity >= 25 else 5 if quantity >= 10 else 0
    assert percent_for(quantity) == expected


def test_exact_tier_lines():
    assert line_discount(2000, 50) == 15_000
    assert line_discount(333, 25) == 833
    assert line_discount(100, 9) == 0


def test_cart_with_every_tier():
    skus = in_category("kitchen")[:3]
    cart = Cart()
    for sku, qty in zip(skus, (10, 25, 50)):
        cart.add(sku, qty)
    expected = sum((product(sku).price_cents * qty * pct + 50) // 100
                   for sku, qty, pct in zip(skus, (10, 25, 50), (5, 10, 15)))
    assert cart.discount() == expected
