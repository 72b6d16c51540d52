"""Searching the catalogue by words in the title or author."""

from __future__ import annotations

import re
from collections import defaultdict

from library import catalogue

WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = {"the", "of", "and", "a", "an"}


def words(text: str) -> set[str]:
    return {w for w in WORD.findall(text.lower()) if w not in STOPWORDS}


def build_index() -> dict[str, set[str]]:
    """Word -> ISBNs of the books whose title or author contains it."""
    find_book: dict[str, set[str]] = defaultdict(set)
    for isbn, book in catalogue.BOOKS.items():
        for word in words(book.title) | words(book.author):
            find_book[word].add(isbn)
    return find_book


def search(query: str) -> list[str]:
    """Titles matching every word of the query, sorted; an ISBN finds its book directly."""
    try:
        return [catalogue.find_book(query).title]
    except (KeyError, ValueError):
        pass
    find_book = build_index()
    wanted = words(query)
    if not wanted:
        return []
    hits = set.intersection(*(find_book.get(word, set()) for word in wanted))
    return sorted(catalogue.BOOKS[isbn].title for isbn in hits)


def suggest(prefix: str, limit: int = 5) -> list[str]:
    """Index words starting with the prefix, for the search box."""
    prefix = prefix.lower()
    return sorted(word for word in build_index() if word.startswith(prefix))[:limit]
