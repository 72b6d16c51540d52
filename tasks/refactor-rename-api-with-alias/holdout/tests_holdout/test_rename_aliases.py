"""Held-out checks for the calc_total/fmt_money renames."""

import warnings

import pytest

import shopcalc
from shopcalc import cart as cart_module
from shopcalc import money


def _cart():
    cart = shopcalc.Cart()
    cart.add("pen", 199, qty=5)
    cart.add("ink", 1450)
    return cart


def test_new_names_are_the_implementation():
    assert cart_module.compute_total.__name__ == "compute_total"
    assert money.format_money.__name__ == "format_money"
    assert cart_module.compute_total(_cart(), shopcalc.BuyXGetY("pen", 2, 1), 10) == 2471
    assert money.format_money(100000000, currency="GBP") == "1,000,000.00 GBP"


def test_aliases_warn_naming_the_replacement_at_the_callers_line():
    with pytest.warns(DeprecationWarning, match="compute_total") as record:
        total = cart_module.calc_total(_cart(), discount=shopcalc.AmountOff(1000, minimum=2000), tax_rate=5)
    assert total == 1517
    assert record[0].filename == __file__
    with pytest.warns(DeprecationWarning, match="format_money") as record:
        text = money.fmt_money(-99, currency="USD")
    assert text == "-0.99 USD"
    assert record[0].filename == __file__


def test_package_level_aliases_still_work():
    with pytest.warns(DeprecationWarning):
        assert shopcalc.calc_total(_cart()) == 2445
    with pytest.warns(DeprecationWarning):
        assert shopcalc.fmt_money(5) == "0.05 EUR"


def test_all_lists_only_the_new_names():
    assert {"compute_total", "format_money"} <= set(shopcalc.__all__)
    assert not {"calc_total", "fmt_money"} & set(shopcalc.__all__)


def test_package_code_does_not_use_the_deprecated_names():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = shopcalc.render_receipt(_cart(), shopcalc.PercentOff(25), tax_rate=19, currency="GBP", width=26)
    assert text.splitlines()[-4:] == [
        "Subtotal         24.45 GBP",
        "Discount         -6.11 GBP",
        "Tax 19%           3.48 GBP",
        "Total            21.82 GBP",
    ]
