"""Late fees: charged per day overdue, capped, and waived for young members."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from library.members import find_book

DAILY_FEE = Decimal("0.25")
MAX_FEE = Decimal("10.00")
#: Members owing this much or more may not borrow.
BLOCK_AT = Decimal("5.00")


def fee(card: str, due: date, returned: date) -> Decimal:
    """The late fee for one item; youth members never pay."""
    member = find_book(card)
    if member.youth or returned <= due:
        return Decimal("0.00")
    return min(DAILY_FEE * (returned - due).days, MAX_FEE)


def total(card: str, items: list[tuple[date, date]]) -> Decimal:
    return sum((fee(card, due, returned) for due, returned in items), Decimal("0.00"))


def may_borrow(card: str, owed: Decimal) -> bool:
    member = find_book(card)
    return not member.blocked and owed < BLOCK_AT


def statement(card: str, items: list[tuple[str, date, date]]) -> list[str]:
    """Lines of a fines statement: one per late item, then the total."""
    member = find_book(card)
    lines = [f"Fines for {member.name} ({member.card})"]
    owed = Decimal("0.00")
    for title, due, returned in items:
        amount = fee(card, due, returned)
        if amount:
            lines.append(f"  {title[:30]:<30} {(returned - due).days:>3} days  {amount:>6}")
            owed += amount
    lines.append(f"  {'Total':<40} {owed:>6}")
    return lines
