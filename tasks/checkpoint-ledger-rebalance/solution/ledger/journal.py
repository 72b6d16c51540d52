"""The journal: postings grouped into transactions that each sum to zero."""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

FIELDS = ["txn", "date", "account", "amount_cents", "memo"]
ACCOUNTS = ("operating", "reserve", "payroll", "dues", "equipment", "equity")


@dataclass(frozen=True)
class Posting:
    txn: int
    date: str
    account: str
    amount_cents: int
    memo: str


def read(path: Path) -> list[Posting]:
    with path.open(newline="", encoding="utf-8") as handle:
        return [Posting(int(r["txn"]), r["date"], r["account"], int(r["amount_cents"]), r["memo"])
                for r in csv.DictReader(handle)]


def append(path: Path, postings: list[Posting]) -> None:
    with path.open("a", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        for p in postings:
            writer.writerow([p.txn, p.date, p.account, p.amount_cents, p.memo])


def next_txn(postings: list[Posting]) -> int:
    return max((p.txn for p in postings), default=0) + 1


def transfer(txn: int, date: str, source: str, target: str, cents: int, memo: str) -> list[Posting]:
    """The two postings that move `cents` out of `source` and into `target`."""
    for account in (source, target):
        if account not in ACCOUNTS:
            raise ValueError(f"unknown account {account!r}")
    if source == target:
        raise ValueError("a transfer needs two different accounts")
    if cents <= 0:
        raise ValueError("a transfer moves a positive amount")
    return [
        Posting(txn, date, source, -cents, memo),
        Posting(txn, date, target, cents, memo),
    ]


def unbalanced(postings: list[Posting]) -> list[int]:
    """Transactions whose postings do not sum to zero."""
    sums: dict[int, int] = defaultdict(int)
    for p in postings:
        sums[p.txn] += p.amount_cents
    return sorted(txn for txn, total in sums.items() if total != 0)
