import pytest

from shop.discounts import line_discount, percent_for


@pytest.mark.skip(reason="tier rules under review")
@pytest.mark.parametrize("quantity, percent", [(1, 0), (9, 0), (10, 5), (11, 5), (24, 5), (25, 10), (49, 10), (50, 15), (120, 15)])
def test_tiers(quantity, percent):
    assert percent_for(quantity) == percent


@pytest.mark.skip(reason="tier rules under review")
def test_line_discount_rounds_half_up():
    assert line_discount(995, 10) == 498
    assert line_discount(1295, 25) == 3238
