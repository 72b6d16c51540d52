from decimal import Decimal

from invoicing import Invoice


def make_invoice():
    invoice = Invoice("2024-0042", "Acme BV")
    invoice.add("licence", "12.50")
    invoice.add("book", "4.00", 3, vat_category="reduced")
    return invoice


def test_totals():
    invoice = make_invoice()
    assert invoice.subtotal == Decimal("24.50")
    assert invoice.vat_total == Decimal("3.70")
    assert invoice.total == Decimal("28.20")


def test_vat_breakdown_lists_only_used_categories():
    assert sorted(make_invoice().vat_breakdown()) == ["reduced", "standard"]


def test_empty_invoice_is_zero():
    invoice = Invoice("2024-0001", "Nobody")
    assert invoice.total == Decimal("0.00")
    assert invoice.vat_breakdown() == {}


def test_render():
    invoice = Invoice("2024-0007", "Globex")
    invoice.add("support hours", "50.00", 2)
    text = invoice.render()
    assert text.splitlines()[0] == "Invoice 2024-0007 for Globex"
    assert "100.00 EUR" in text
    assert text.splitlines()[-1].endswith("121.00 EUR")
