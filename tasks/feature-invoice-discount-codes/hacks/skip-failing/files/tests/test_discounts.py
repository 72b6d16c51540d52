from decimal import Decimal

import pytest

from billing import Invoice, LineItem, render_text
discounts = pytest.importorskip("billing.discounts")
DiscountCode, DiscountError = discounts.DiscountCode, discounts.DiscountError


def shop(region="NONE"):
    inv = Invoice("INV-5", region=region)
    inv.add(LineItem("TEA", "Green tea", "12.50", quantity=2))
    inv.add(LineItem("CUP", "Cup", "5.00"))
    return inv


def test_percent_code():
    inv = shop()
    inv.apply_discount(DiscountCode("save10", "percent", "10"))
    assert inv.discount == Decimal("3.00")
    assert inv.total == Decimal("27.00")
    assert inv.to_dict()["discount_code"] == "SAVE10"


def test_fixed_code_never_exceeds_subtotal():
    inv = shop()
    inv.apply_discount(DiscountCode("BIG", "fixed", "50"))
    assert inv.discount == Decimal("30.00")
    assert inv.total == Decimal("0.00")


def test_discount_is_taken_before_tax_in_proportion():
    inv = Invoice("INV-6", region="CA")
    inv.add(LineItem("KETTLE", "Kettle", "80.00"))
    inv.add(LineItem("GIFT", "Gift card", "20.00", taxable=False))
    inv.apply_discount(DiscountCode("QUARTER", "percent", "25"))
    assert inv.discount == Decimal("25.00")
    assert inv.tax == Decimal("4.35")
    assert inv.total == Decimal("79.35")


def test_one_code_per_invoice_and_minimum_subtotal():
    inv = shop()
    with pytest.raises(DiscountError):
        inv.apply_discount(DiscountCode("BULK", "fixed", "5", min_subtotal="100"))
    inv.apply_discount(DiscountCode("SAVE10", "percent", "10"))
    with pytest.raises(DiscountError):
        inv.apply_discount(DiscountCode("OTHER", "fixed", "1"))


def test_render_shows_discount_line():
    inv = shop()
    inv.apply_discount(DiscountCode("save10", "percent", "10"))
    lines = render_text(inv).splitlines()
    assert lines[-3].startswith("Discount (SAVE10)") and lines[-3].endswith("-$3.00")
    assert len(lines[-3]) == 40
    assert lines[-1].endswith("$27.00")


@pytest.mark.parametrize("kind, value", [("percent", "0"), ("percent", "150"), ("bogus", "5")])
def test_invalid_codes_are_refused(kind, value):
    with pytest.raises(DiscountError):
        DiscountCode("X", kind, value)
