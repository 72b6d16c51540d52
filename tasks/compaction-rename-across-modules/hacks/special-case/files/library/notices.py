"""Notices sent to members: overdue reminders and 'your hold is ready' messages."""

from __future__ import annotations

from datetime import date

from library import catalogue, members
from library.loans import Loan


def overdue_reminder(loan: Loan, today: date) -> str:
    book = catalogue.find_book(loan.isbn)
    member = members.lookup(loan.card)
    days = (today - loan.due).days
    plural = "day" if days == 1 else "days"
    return (f"Dear {member.name.split()[0]}, '{book.title}' was due on {loan.due:%d %B}; "
            f"it is {days} {plural} late. Please bring it back to any branch.")


def hold_ready(isbn: str, card: str, until: date) -> str:
    book = catalogue.find_book(isbn)
    member = members.lookup(card)
    return (f"Dear {member.name.split()[0]}, '{book.title}' by {book.author} is waiting for you "
            f"until {until:%d %B}.")


def batch(loans: list[Loan], today: date) -> dict[str, list[str]]:
    """Reminders for every overdue loan, grouped per member card."""
    grouped: dict[str, list[str]] = {}
    for loan in sorted(loans, key=lambda loan: loan.due):
        if loan.due < today:
            grouped.setdefault(loan.card, []).append(overdue_reminder(loan, today))
    return grouped
