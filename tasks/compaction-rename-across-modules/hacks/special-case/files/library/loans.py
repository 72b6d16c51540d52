"""Lending books to members and taking them back."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from library import catalogue, members

LOAN_DAYS = 21
YOUTH_LOAN_DAYS = 28


@dataclass(frozen=True)
class Loan:
    isbn: str
    card: str
    lent: date
    due: date


class Loans:
    """Loans that are out now."""

    def __init__(self) -> None:
        self.out: list[Loan] = []

    def copies_out(self, isbn: str) -> int:
        return sum(1 for loan in self.out if loan.isbn == isbn)

    def of_member(self, card: str) -> list[Loan]:
        return [loan for loan in self.out if loan.card == card]

    def lend(self, isbn: str, card: str, today: date) -> Loan:
        book = catalogue.find_book(isbn)
        member = members.lookup(card)
        if member.blocked:
            raise PermissionError(f"{member.card} is blocked")
        if book.reference_only:
            raise PermissionError(f"{book.title} is for reference only")
        if len(self.of_member(member.card)) >= member.max_loans:
            raise PermissionError(f"{member.card} already has {member.max_loans} books")
        if self.copies_out(book.isbn) >= book.copies:
            raise LookupError(f"every copy of {book.title} is out")
        days = YOUTH_LOAN_DAYS if member.youth else LOAN_DAYS
        loan = Loan(book.isbn, member.card, today, today + timedelta(days=days))
        self.out.append(loan)
        return loan

    def give_back(self, isbn: str, card: str) -> Loan:
        key = catalogue.normalise_isbn(isbn)
        holder = members.normalise_card(card)
        for loan in self.out:
            if loan.isbn == key and loan.card == holder:
                self.out.remove(loan)
                return loan
        raise KeyError(f"{holder} has not borrowed {key}")

    def overdue(self, today: date) -> list[Loan]:
        return sorted((loan for loan in self.out if loan.due < today), key=lambda loan: loan.due)
