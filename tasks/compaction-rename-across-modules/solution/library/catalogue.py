"""The catalogue: every title the library owns, by ISBN."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Book:
    isbn: str
    title: str
    author: str
    year: int
    copies: int = 1
    reference_only: bool = False


#: The catalogue itself, keyed by normalised ISBN-13.
BOOKS: dict[str, Book] = {}


def normalise_isbn(isbn: str) -> str:
    """Digits only; an ISBN-10 becomes its ISBN-13 (978 prefix, new check digit)."""
    digits = isbn.replace("-", "").replace(" ", "").upper()
    if len(digits) == 10 and digits[:9].isdigit() and (digits[9].isdigit() or digits[9] == "X"):
        core = "978" + digits[:9]
        return core + str(_check13(core))
    if len(digits) == 13 and digits.isdigit() and int(digits[12]) == _check13(digits[:12]):
        return digits
    raise ValueError(f"{isbn!r} is not a valid ISBN")


def _check13(first12: str) -> int:
    total = sum(int(d) * (1 if i % 2 == 0 else 3) for i, d in enumerate(first12))
    return (10 - total % 10) % 10


def add(book: Book) -> Book:
    isbn = normalise_isbn(book.isbn)
    stored = Book(isbn, book.title, book.author, book.year, book.copies, book.reference_only)
    BOOKS[isbn] = stored
    return stored


def find_book(isbn: str) -> Book:
    """The book with this ISBN (any valid form); KeyError if we do not own it."""
    key = normalise_isbn(isbn)
    try:
        return BOOKS[key]
    except KeyError:
        raise KeyError(f"no book with ISBN {key} in the catalogue") from None


def owned(isbn: str) -> bool:
    try:
        find_book(isbn)
    except (KeyError, ValueError):
        return False
    return True


def seed() -> None:
    """Reset the catalogue to the sample collection used in tests and demos."""
    BOOKS.clear()
    for book in (
        Book("9780141439518", "Pride and Prejudice", "Jane Austen", 1813, copies=3),
        Book("9780261103573", "The Fellowship of the Ring", "J. R. R. Tolkien", 1954, copies=2),
        Book("9780140449136", "Crime and Punishment", "Fyodor Dostoevsky", 1866),
        Book("9780198600114", "Oxford Dictionary of English", "Oxford", 2010, reference_only=True),
        Book("9780099518471", "Brave New World", "Aldous Huxley", 1932, copies=2),
    ):
        add(book)


seed()
