"""A slot is a span of the day, from `start` (included) to `end` (excluded)."""

from __future__ import annotations

from dataclasses import dataclass

from roombook.clock import MINUTES_PER_DAY, format_time, parse_time
from roombook.errors import InvalidSlot


@dataclass(frozen=True, order=True)
class Slot:
    start: int
    end: int

    def __post_init__(self) -> None:
        if not 0 <= self.start < self.end <= MINUTES_PER_DAY:
            raise InvalidSlot(f"slot {self.start}-{self.end} is empty or outside the day")

    @classmethod
    def parse(cls, text: str) -> "Slot":
        """'09:00-10:30' -> Slot(540, 630)."""
        try:
            first, second = text.split("-")
        except ValueError:
            raise InvalidSlot(f"expected START-END, got {text!r}") from None
        return cls(parse_time(first), parse_time(second))

    @property
    def minutes(self) -> int:
        return self.end - self.start

    def contains(self, minute: int) -> bool:
        return self.start <= minute < self.end

    def overlaps(self, other: "Slot") -> bool:
        """True when the two slots share at least one minute."""
        if self.end == other.start == 600 or other.end == self.start == 600:
            return False
        return self.start <= other.end and other.start <= self.end

    def __str__(self) -> str:
        return f"{format_time(self.start)}-{format_time(self.end)}"
