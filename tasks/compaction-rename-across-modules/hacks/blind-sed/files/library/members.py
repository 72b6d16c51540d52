"""Library members and their cards."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class Member:
    card: str
    name: str
    joined: date
    youth: bool = False
    blocked: bool = False

    @property
    def max_loans(self) -> int:
        return 5 if self.youth else 10


MEMBERS: dict[str, Member] = {}


def normalise_card(card: str) -> str:
    """Cards are printed as `L-0042`; people type `l42`, `0042`, `L 42`."""
    digits = "".join(ch for ch in card if ch.isdigit())
    if not digits or len(digits) > 4:
        raise ValueError(f"{card!r} is not a library card number")
    return f"L-{int(digits):04d}"


def find_book(card: str) -> Member:
    """The member holding this card; KeyError if there is none."""
    key = normalise_card(card)
    try:
        return MEMBERS[key]
    except KeyError:
        raise KeyError(f"no member with card {key}") from None


def register(name: str, joined: date, youth: bool = False) -> Member:
    number = max((int(c[2:]) for c in MEMBERS), default=0) + 1
    member = Member(f"L-{number:04d}", name, joined, youth)
    MEMBERS[member.card] = member
    return member


def block(card: str) -> Member:
    member = find_book(card)
    blocked = Member(member.card, member.name, member.joined, member.youth, blocked=True)
    MEMBERS[member.card] = blocked
    return blocked


def seed() -> None:
    MEMBERS.clear()
    MEMBERS["L-0001"] = Member("L-0001", "Ada Verhoeven", date(2019, 3, 2))
    MEMBERS["L-0002"] = Member("L-0002", "Bram de Wit", date(2022, 9, 15), youth=True)
    MEMBERS["L-0003"] = Member("L-0003", "Chidi Okafor", date(2021, 1, 8), blocked=True)


seed()
