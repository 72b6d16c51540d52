"""Reading the stock list and what it is worth."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

ITEMS = Path("data/items.csv")


@dataclass(frozen=True)
class Item:
    sku: str
    name: str
    #: Price in whole cents (schema version 3 and later).
    price_cents: int
    qty: int


def load(path: Path = ITEMS) -> list[Item]:
    with path.open(newline="", encoding="utf-8") as handle:
        return [Item(row["sku"], row["name"], int(row["price"]), int(row["qty"]))
                for row in csv.DictReader(handle)]


def format_cents(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    euros, rest = divmod(abs(cents), 100)
    return f"EUR {sign}{euros:,}.{rest:02d}"


def stock_value_cents(items: list[Item]) -> int:
    return sum(item.price_cents * item.qty for item in items)


def low_stock(items: list[Item], threshold: int = 5) -> list[str]:
    return [item.sku for item in items if item.qty < threshold]


def price_list(items: list[Item]) -> list[str]:
    return [f"{item.sku:<6} {item.name:<28} {format_cents(item.price_cents):>14}"
            for item in sorted(items, key=lambda i: i.sku)]
