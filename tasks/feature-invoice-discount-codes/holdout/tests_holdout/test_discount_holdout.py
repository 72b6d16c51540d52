from decimal import Decimal

import pytest

from billing import Invoice, LineItem, render_text
from billing.discounts import DiscountCode, DiscountError


def test_percent_rounds_half_up_to_the_cent():
    inv = Invoice("H-1")
    inv.add(LineItem("PEN", "Pen", "10.10"))
    inv.apply_discount(DiscountCode("Fifteen", "percent", "15"))
    assert inv.discount == Decimal("1.52")
    assert inv.total == Decimal("8.58")


def test_taxable_share_is_rounded_before_tax():
    inv = Invoice("H-2", region="NY")
    inv.add(LineItem("LAMP", "Lamp", "33.33"))
    inv.add(LineItem("CARD", "Card", "10.00", taxable=False))
    inv.apply_discount(DiscountCode("FIVE", "fixed", "5.00"))
    assert inv.discount == Decimal("5.00")
    assert inv.tax == Decimal("1.18")
    assert inv.total == Decimal("39.51")


def test_discount_lapses_below_minimum_but_code_stays():
    inv = Invoice("H-3", region="TX")
    inv.add(LineItem("DESK", "Desk", "120.00"))
    inv.add(LineItem("CHAIR", "Chair", "60.00"))
    inv.apply_discount(DiscountCode("BIGSPEND", "fixed", "20", min_subtotal="150"))
    assert inv.total == Decimal("160.00") + Decimal("10.00")
    inv.remove("CHAIR")
    assert inv.discount == Decimal("0.00")
    assert inv.total == Decimal("127.50")
    assert inv.to_dict()["discount_code"] == "BIGSPEND"
    assert inv.to_dict()["discount"] == "0.00"
    assert not any(line.startswith("Discount") for line in render_text(inv).splitlines())


def test_remove_discount_allows_another_code():
    inv = Invoice("H-4")
    inv.add(LineItem("BAG", "Bag", "40.00"))
    inv.apply_discount(DiscountCode("A", "fixed", "1"))
    with pytest.raises(DiscountError):
        inv.apply_discount(DiscountCode("A", "fixed", "1"))
    inv.remove_discount()
    inv.apply_discount(DiscountCode(" half ", "percent", "50"))
    assert inv.to_dict()["discount_code"] == "HALF"
    assert inv.total == Decimal("20.00")


def test_empty_invoice_with_code_totals_zero():
    inv = Invoice("H-5", region="CA")
    inv.apply_discount(DiscountCode("ANY", "percent", "100"))
    assert inv.discount == Decimal("0.00")
    assert inv.tax == Decimal("0.00")
    assert inv.total == Decimal("0.00")


@pytest.mark.parametrize("args", [("  ", "fixed", "5"), ("X", "fixed", "-2"), ("X", "percent", "10", "-1")])
def test_more_invalid_codes(args):
    with pytest.raises(DiscountError):
        DiscountCode(*args)


def test_a_subtotal_exactly_at_the_minimum_earns_the_discount():
    inv = Invoice("H-6")
    inv.add(LineItem("DESK", "Desk", "150.00"))
    inv.apply_discount(DiscountCode("BIGSPEND", "fixed", "20.00", min_subtotal="150.00"))
    assert inv.discount == Decimal("20.00")
    assert inv.total == Decimal("130.00")


def test_a_discount_code_is_frozen():
    code = DiscountCode("save", "percent", "10")
    with pytest.raises(AttributeError):
        code.value = Decimal("90")
    assert code.value == Decimal("10")


@pytest.mark.parametrize("kind", ["fixed", "percent"])
def test_a_zero_discount_is_invalid(kind):
    with pytest.raises(DiscountError):
        DiscountCode("NOTHING", kind, "0")
