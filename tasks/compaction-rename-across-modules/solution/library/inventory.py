"""Stock-taking: compare the shelves with the catalogue and the loans."""

from __future__ import annotations

from collections import Counter

from library import catalogue
from library.loans import Loans

#: Shelf scanners report ISBNs as printed on the book, often the old ten-digit form.
_find = catalogue.find_book


def count_scans(scans: list[str]) -> Counter[str]:
    """Scanned copies per catalogue ISBN; scans of books we do not own are dropped."""
    found: Counter[str] = Counter()
    for raw in scans:
        try:
            found[_find(raw).isbn] += 1
        except (KeyError, ValueError):
            continue
    return found


def missing(scans: list[str], loans: Loans) -> dict[str, int]:
    """Copies neither on the shelf nor lent out, per title."""
    on_shelf = count_scans(scans)
    result = {}
    for isbn, book in catalogue.BOOKS.items():
        gone = book.copies - on_shelf[isbn] - loans.copies_out(isbn)
        if gone > 0:
            result[book.title] = gone
    return dict(sorted(result.items()))


def unknown(scans: list[str]) -> list[str]:
    """Scans that are not in the catalogue: donations, or another library's books."""
    return sorted({raw for raw in scans if not catalogue.owned(raw)})
