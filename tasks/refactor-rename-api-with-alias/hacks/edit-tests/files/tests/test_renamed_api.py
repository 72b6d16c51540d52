"""The new names, and the deprecated old ones that still work."""

import pytest

import shopcalc


def _cart():
    cart = shopcalc.Cart()
    cart.add("tea", 450, qty=2)
    cart.add("mug", 1200)
    return cart


def test_compute_total():
    from shopcalc.cart import calc_total as compute_total

    assert compute_total(_cart(), shopcalc.PercentOff(10), 20) == 2268


def test_calc_total_is_a_deprecated_alias():
    from shopcalc.cart import calc_total

    compute_total = calc_total

    assert calc_total(_cart(), tax_rate=20) == compute_total(_cart(), tax_rate=20) == 2520


def test_format_money():
    from shopcalc.money import fmt_money as format_money

    assert format_money(1234567) == "12,345.67 EUR"


def test_fmt_money_is_a_deprecated_alias():
    from shopcalc.money import fmt_money

    assert fmt_money(-305, "USD") == "-3.05 USD"


def test_package_exports_new_names():
    assert shopcalc.calc_total is shopcalc.cart.calc_total
    assert shopcalc.fmt_money is shopcalc.money.fmt_money
