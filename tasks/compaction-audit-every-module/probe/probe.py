"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


from datetime import date
from decimal import Decimal

from shipyard import MODULES, ShipError, carriers, insurance, parcels, rates
from shipyard.catalog import CODES, codes_for, describe


def code_of(call):
    try:
        call()
    except ShipError as exc:
        return exc.code
    return "no error"


def raised_codes():
    parcel = parcels.make_parcel(800, 20, 15, 10)
    calls = [
        lambda: rates.quote("NL", "1791 AA", parcel, "express"),
        lambda: insurance.insure("SY0000000017", Decimal("7000"), date(2024, 2, 1)),
        lambda: carriers.choose("JP", "standard", 100),
        lambda: parcels.make_parcel(0, 10, 10, 10),
    ]
    return [[code, list(CODES[code])] for code in map(code_of, calls)]


print(json.dumps({
    "per_module": see(lambda: {module: codes_for(module) for module in MODULES}),
    "count": see(lambda: len(CODES)),
    "describe": see(lambda: [describe(code.lower()) for code in sorted(CODES)[::5]]),
    "raised": see(raised_codes),
}, sort_keys=True))
