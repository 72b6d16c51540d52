"""Holds: members queue for a title that is out; first come, first served."""

from __future__ import annotations

from collections import defaultdict, deque
from datetime import date, timedelta

from library.catalogue import find_book
from library.members import lookup as find_member

#: A member has this many days to collect a book once it is waiting for them.
PICKUP_DAYS = 7


class Holds:
    def __init__(self) -> None:
        self.queues: dict[str, deque[str]] = defaultdict(deque)
        self.ready: dict[str, tuple[str, date]] = {}

    def place(self, isbn: str, card: str) -> int:
        """Queue the member for the title; returns their place in the queue (1 = next)."""
        book = find_book(isbn)
        member = find_member(card)
        queue = self.queues[book.isbn]
        if member.card in queue:
            raise ValueError(f"{member.card} already holds {book.title}")
        queue.append(member.card)
        return len(queue)

    def cancel(self, isbn: str, card: str) -> None:
        book = find_book(isbn)
        self.queues[book.isbn].remove(find_member(card).card)

    def copy_returned(self, isbn: str, today: date) -> str | None:
        """A copy came back: the next member in the queue gets it. Returns their card."""
        book = find_book(isbn)
        queue = self.queues[book.isbn]
        if not queue:
            return None
        card = queue.popleft()
        self.ready[book.isbn + card] = (card, today + timedelta(days=PICKUP_DAYS))
        return card

    def expired(self, today: date) -> list[str]:
        """Cards whose waiting book was not collected in time."""
        return sorted(card for card, until in self.ready.values() if until < today)
