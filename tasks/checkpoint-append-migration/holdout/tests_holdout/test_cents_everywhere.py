import csv
import importlib.util
from pathlib import Path

import pytest

from stockroom import inventory

#: The prices in euros before the migration.
EUROS = {
    "A-100": "12.50", "A-101": "0.29", "A-102": "4.35", "A-103": "1.15", "B-200": "7.5", "B-201": "23.95",
    "B-202": "3", "C-300": "189.00", "C-301": "9.99", "C-302": "11.45", "D-400": "1049.95", "D-401": "0.10",
}


def migration():
    path = Path("migrations/m0003_prices_to_cents.py")
    spec = importlib.util.spec_from_file_location("m0003_check", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_row_converted_exactly_once():
    with open("data/items.csv", newline="") as handle:
        prices = {row["sku"]: row["price"] for row in csv.DictReader(handle)}
    expected = {sku: str(round(float(euros) * 100)) for sku, euros in EUROS.items()}
    assert prices == expected


def test_quantities_and_names_untouched():
    with open("data/items.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["qty"] for r in rows] == ["40", "1200", "85", "300", "64", "18", "150", "4", "22", "30", "2", "500"]
    assert rows[4]["name"] == "Cabinet handle brushed"


@pytest.mark.parametrize("euros, cents", [("0.29", "29"), ("4.35", "435"), ("1.15", "115"), ("2", "200"),
                                          ("0.1", "10"), ("19.99", "1999")])
def test_migration_converts_without_float_error(euros, cents):
    rows = migration().apply([{"sku": "X", "name": "x", "price": euros, "qty": "1"}])
    assert rows == [{"sku": "X", "name": "x", "price": cents, "qty": "1"}]


def test_format_large_and_zero():
    assert inventory.format_cents(0) == "EUR 0.00"
    assert inventory.format_cents(100_000_000) == "EUR 1,000,000.00"
