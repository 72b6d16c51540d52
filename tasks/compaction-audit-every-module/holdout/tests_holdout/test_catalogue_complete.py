"""The catalogue against the source: every code any module can raise, and nothing else."""

import ast
import re
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import Path

import pytest

import shipyard
from shipyard import (
    MODULES, ShipError, addresses, carriers, customs, insurance, invoices, labels, parcels,
    pickups, rates, returns, tracking, warehouses,
)
from shipyard.catalog import CODES, codes_for, describe

CODE = re.compile(r"[A-Z]{3}-\d{2}")
PACKAGE = Path(shipyard.__file__).parent


def codes_in_source(module):
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    return sorted({node.value for node in ast.walk(tree)
                   if isinstance(node, ast.Constant) and isinstance(node.value, str) and CODE.fullmatch(node.value)})


@pytest.mark.parametrize("module", MODULES)
def test_module_codes_match_the_source(module):
    assert codes_for(module) == codes_in_source(module)


def test_nothing_invented():
    in_source = {code for module in MODULES for code in codes_in_source(module)}
    assert set(CODES) == in_source


def raised(call):
    with pytest.raises(ShipError) as exc:
        call()
    return exc.value.code


def test_indirect_codes_are_catalogued():
    parcel = parcels.make_parcel(500, 10, 10, 10)
    codes = {
        raised(lambda: rates.quote("NL", "1791 AA", parcel, "express")): "rates",
        raised(lambda: rates.quote("NL", "9901 AA", parcel, "express")): "rates",
        raised(lambda: insurance.insure("SY0000000017", Decimal("6000"), date(2024, 1, 1))): "insurance",
        raised(lambda: carriers.choose("DE", "standard", 100, preferred="GLS")): "carriers",
        raised(lambda: carriers.check(carriers.by_name("DPD"), "DE", "express", 100)): "carriers",
        raised(lambda: carriers.choose("JP", "standard", 100)): "carriers",
    }
    assert len(codes) == 6
    for code, module in codes.items():
        assert CODES[code][0] == module, code


def test_second_failure_of_each_module():
    address = addresses.make_address("A. Jansen", "Kade 1", "1011AB", "Amsterdam", "NL")
    cases = [
        ("addresses", lambda: addresses.make_address("x" * 40, "Kade 1", "1011AB", "Amsterdam", "NL")),
        ("parcels", lambda: parcels.split_weight(10_000, 0)),
        ("customs", lambda: customs.check(customs.Declaration("US"))),
        ("labels", lambda: labels.void(labels.make_label("SY0000000017", address))),
        ("pickups", lambda: pickups.book(datetime(2024, 5, 8, 9), date(2024, 5, 9), time(7), time(12), 1)),
        ("tracking", lambda: tracking.parse("SY0000000019")),
        ("returns", lambda: returns.batch_refund([
            returns.ReturnRequest("o-1", "shoes", "damaged", date(2024, 1, 1), date(2024, 1, 2), Decimal("5")),
            returns.ReturnRequest("o-2", "shoes", "damaged", date(2024, 1, 1), date(2024, 1, 2), Decimal("5")),
        ])),
        ("insurance", lambda: insurance.claim(insurance.Cover("SY1", Decimal("10"), date(2024, 1, 1)),
                                              Decimal("5"), date(2024, 6, 1))),
        ("invoices", lambda: invoices.Invoice("Acme").add(invoices.Line("x", Decimal("1"), "USD"))),
        ("warehouses", lambda: warehouses.Stock().put("AMS", "c7", "sku-1", 1)),
    ]
    for module, call in cases:
        code = raised(call)
        assert CODES[code][0] == module, (module, code)


def test_describe_every_code():
    for code, (module, meaning) in CODES.items():
        assert describe(code.lower()) == f"{code} [{module}] {meaning}"
