"""Moving copies between branches to meet demand."""

from __future__ import annotations

from dataclasses import dataclass

from library import catalogue

BRANCHES = ("central", "north", "harbour")


@dataclass(frozen=True)
class Transfer:
    isbn: str
    source: str
    target: str
    copies: int


def request(isbn: str, source: str, target: str, copies: int = 1) -> Transfer:
    book = catalogue.find_book(isbn)
    if source not in BRANCHES or target not in BRANCHES:
        raise ValueError(f"unknown branch in {source} -> {target}")
    if source == target:
        raise ValueError("a transfer needs two different branches")
    if book.reference_only:
        raise PermissionError(f"{book.title} is reference only and stays at {source}")
    if copies < 1 or copies > book.copies:
        raise ValueError(f"cannot move {copies} of {book.copies} copies")
    return Transfer(book.isbn, source, target, copies)


def balance(holds_per_branch: dict[str, dict[str, int]], stock: dict[str, dict[str, int]]) -> list[Transfer]:
    """Transfers that move one spare copy to each branch with more holds than copies."""
    moves = []
    for isbn in sorted({i for branch in holds_per_branch.values() for i in branch}):
        catalogue.find_book(isbn)  # an unknown ISBN fails here, before anything moves
        short = [b for b in BRANCHES if holds_per_branch.get(b, {}).get(isbn, 0) > stock.get(b, {}).get(isbn, 0)]
        spare = [b for b in BRANCHES if stock.get(b, {}).get(isbn, 0) > holds_per_branch.get(b, {}).get(isbn, 0)]
        for target in short:
            if not spare:
                break
            source = spare.pop(0)
            moves.append(Transfer(isbn, source, target, 1))
    return moves
