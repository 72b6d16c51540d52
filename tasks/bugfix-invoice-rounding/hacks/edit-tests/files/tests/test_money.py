from decimal import Decimal

import pytest

from invoicing.money import format_amount, parse_amount, round_cents


@pytest.mark.parametrize("text, expected", [("12", "12"), ("1,234.50", "1234.50"), (" 0.10 ", "0.10"), (7, "7")])
def test_parse_amount(text, expected):
    assert parse_amount(text) == Decimal(expected)


def test_parse_amount_refuses_floats():
    with pytest.raises(TypeError):
        parse_amount(0.1)


@pytest.mark.parametrize("text", ["", "abc", "NaN", "1.2.3"])
def test_parse_amount_refuses_garbage(text):
    with pytest.raises(ValueError):
        parse_amount(text)


@pytest.mark.parametrize(
    "value, expected",
    [("2.345", "2.34"), ("0.125", "0.12"), ("1.004", "1.00"), ("-2.345", "-2.34"), ("3.999", "4.00")],
)
def test_round_cents_half_up(value, expected):
    assert round_cents(Decimal(value)) == Decimal(expected)


def test_format_amount():
    assert format_amount(Decimal("1234.5")) == "1,234.50 EUR"
    assert format_amount(Decimal("-3"), "USD") == "-3.00 USD"
