from decimal import Decimal

import pytest

from invoicing import Invoice, LineItem
from invoicing.money import format_amount, round_cents


@pytest.mark.parametrize(
    "value, expected",
    [("0.005", "0.01"), ("10.485", "10.49"), ("-0.045", "-0.05"), ("7.865", "7.87")],
)
def test_other_half_cents_round_away_from_zero(value, expected):
    assert round_cents(Decimal(value)) == Decimal(expected)


def test_half_discount_on_odd_cents():
    assert LineItem("print run", "8.45", 1, discount_pct=50).net == Decimal("4.23")


def test_vat_on_small_amounts():
    assert LineItem("sticker", "0.50").vat == Decimal("0.11")
    assert LineItem("leaflet", "4.50", vat_category="reduced").vat == Decimal("0.41")


def test_credit_note_rounds_away_from_zero():
    line = LineItem("refund", "12.50", -1)
    assert line.vat == Decimal("-2.63")


def test_invoice_total_and_rendering():
    invoice = Invoice("2024-0100", "Initech")
    invoice.add("sticker", "0.50", 3)
    invoice.add("leaflet", "4.50", vat_category="reduced")
    assert invoice.vat_total == Decimal("0.73")
    assert format_amount(Decimal("-1234.565")) == "-1,234.57 EUR"
    assert invoice.render().splitlines()[-1].endswith("6.73 EUR")
