"""Buying books: purchase suggestions and adding what arrives to the catalogue.

A suggestion for a title we already own becomes an extra copy; the check uses
catalogue.find_book, which accepts ISBN-10 and ISBN-13 alike.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal

from library import catalogue

BUDGET_PER_YEAR = Decimal("12000.00")


@dataclass(frozen=True)
class Suggestion:
    isbn: str
    title: str
    author: str
    year: int
    price: Decimal
    votes: int = 1


def is_extra_copy(suggestion: Suggestion) -> bool:
    try:
        catalogue.find_book(suggestion.isbn)
    except KeyError:
        return False
    return True


def shortlist(suggestions: list[Suggestion], budget: Decimal) -> list[Suggestion]:
    """Most-voted first, new titles before extra copies, within the budget."""
    ranked = sorted(suggestions, key=lambda s: (-s.votes, is_extra_copy(s), s.price))
    chosen, spent = [], Decimal("0.00")
    for suggestion in ranked:
        if spent + suggestion.price <= budget:
            chosen.append(suggestion)
            spent += suggestion.price
    return chosen


def receive(suggestion: Suggestion) -> catalogue.Book:
    """Put a delivered book in the catalogue: a new title, or one more copy."""
    try:
        book = catalogue.find_book(suggestion.isbn)
    except KeyError:
        return catalogue.add(catalogue.Book(suggestion.isbn, suggestion.title, suggestion.author, suggestion.year))
    more = replace(book, copies=book.copies + 1)
    catalogue.BOOKS[book.isbn] = more
    return more
