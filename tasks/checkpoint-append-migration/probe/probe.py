"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


import csv
import importlib.util

from stockroom import inventory


def rows():
    with open("data/items.csv", newline="") as handle:
        return [[row["sku"], row["price"], row["qty"]] for row in csv.DictReader(handle)]


def migrate(euros):
    spec = importlib.util.spec_from_file_location("m0003", "migrations/m0003_prices_to_cents.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.apply([{"sku": "Y", "name": "y", "price": euros, "qty": "2"}])


print(json.dumps({
    "rows": see(rows),
    "migrate": see(lambda: [migrate(v) for v in ("0.57", "8.2", "1.005", "12")]),
    "format": see(lambda: [inventory.format_cents(n) for n in (0, 5, 123456, 2500000)]),
    "schema": see(lambda: open("data/SCHEMA_VERSION").read().strip()),
}, sort_keys=True))
