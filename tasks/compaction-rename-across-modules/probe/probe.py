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

from library import acquisitions, catalogue, inventory, loans, members, reports, transfers

catalogue.seed()
members.seed()


def lent():
    return [
        loans.Loan("9780261103573", "L-0002", date(2024, 5, 2), date(2024, 5, 23)),
        loans.Loan("9780141439518", "L-0001", date(2024, 5, 9), date(2024, 6, 6)),
        loans.Loan("9780261103573", "L-0001", date(2024, 5, 30), date(2024, 6, 20)),
    ]


def books():
    return [[isbn, getattr(catalogue.find_book(isbn), "title", None)]
            for isbn in ("9780261103573", "0141439513", "9780099518471")]


def stock():
    book_loans = loans.Loans()
    book_loans.lend("9780261103573", "L-0002", date(2024, 5, 1))
    scans = ["9780141439518", "0099518473", "9780000000000"]
    return {"missing": inventory.missing(scans, book_loans), "unknown": inventory.unknown(scans)}


def move():
    m = transfers.request("9780141439518", "north", "central", 1)
    return [m.isbn, m.source, m.target, m.copies] if hasattr(m, "source") else str(m)


print(json.dumps({
    "find_book": see(books),
    "old_name_gone": see(lambda: hasattr(catalogue, "lookup")),
    "member": see(lambda: members.lookup("0002").youth),
    "popular": see(lambda: [list(row) for row in reports.popular(lent(), top=2)]),
    "decades": see(lambda: reports.by_decade(lent())),
    "stock": see(stock),
    "move": see(move),
    "receive": see(lambda: acquisitions.receive(acquisitions.Suggestion(
        "9780261103573", "The Hobbit", "J. R. R. Tolkien", 1937, Decimal("12.50"), votes=2)).copies),
}, sort_keys=True))
