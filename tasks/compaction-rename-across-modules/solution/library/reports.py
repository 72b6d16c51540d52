"""Monthly reports for the library board."""

from __future__ import annotations

from collections import Counter
from datetime import date

from library.catalogue import find_book as book_lookup
from library.loans import Loan


def popular(loans: list[Loan], top: int = 3) -> list[tuple[str, int]]:
    """The most borrowed titles in a list of loans, with their counts."""
    counts = Counter(loan.isbn for loan in loans)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:top]
    return [(book_lookup(isbn).title, count) for isbn, count in ranked]


def by_decade(loans: list[Loan]) -> dict[str, int]:
    """How many loans went to books from each decade of publication."""
    decades: Counter[str] = Counter()
    for loan in loans:
        year = book_lookup(loan.isbn).year
        decades[f"{year // 10 * 10}s"] += 1
    return dict(sorted(decades.items()))


def monthly(loans: list[Loan], year: int, month: int) -> list[str]:
    start = date(year, month, 1)
    end = date(year + month // 12, month % 12 + 1, 1)
    these = [loan for loan in loans if start <= loan.lent < end]
    lines = [f"Loans in {start:%B %Y}: {len(these)}"]
    for title, count in popular(these):
        lines.append(f"  {count:>3}  {title}")
    return lines
