"""Reminder rules: when does a reminder fire next?

A rule is written as a short string:

    once 2024-03-05 09:00   fires a single time
    daily 08:30             fires every day at 08:30
    hourly :15              fires at quarter past every hour
    weekdays 09:00          fires Monday to Friday at 09:00
    weekends 10:00          fires Saturday and Sunday at 10:00
    on mon,wed,fri 07:30    fires on the named days at 07:30

`parse_rule` turns the string into a rule object. Every rule has
`next_after(moment)`: the first firing strictly after `moment`, or None when
the rule will never fire again. Datetimes are naive local wall-clock times.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta

from .errors import RuleError
from .timeparse import parse_date, parse_hhmm, parse_minute

#: Three-letter day names, indexed like datetime.weekday() (0 = Monday).
DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


@dataclass(frozen=True)
class Once:
    at: datetime

    def next_after(self, moment: datetime) -> datetime | None:
        return self.at if self.at > moment else None


@dataclass(frozen=True)
class Daily:
    at: time

    def next_after(self, moment: datetime) -> datetime:
        candidate = datetime.combine(moment.date(), self.at)
        if candidate <= moment:
            candidate += timedelta(days=1)
        return candidate


@dataclass(frozen=True)
class Hourly:
    minute: int

    def next_after(self, moment: datetime) -> datetime:
        candidate = moment.replace(minute=self.minute, second=0, microsecond=0)
        if candidate <= moment:
            candidate += timedelta(hours=1)
        return candidate


@dataclass(frozen=True)
class Weekly:
    #: Weekday numbers (0 = Monday), ascending, no repeats.
    days: tuple[int, ...]
    at: time

    def next_after(self, moment: datetime) -> datetime:
        start = datetime.combine(moment.date(), self.at)
        # A week and a day covers "today, but the time has passed".
        for offset in range(8):
            candidate = start + timedelta(days=offset)
            if candidate > moment and candidate.weekday() in self.days:
                return candidate
        raise AssertionError(f"no firing within a week for {self!r}")


def parse_rule(text: str):
    """Parse a rule string; raise RuleError saying what was wrong."""
    words = text.split()
    if not words:
        raise RuleError("empty rule")
    keyword, args = words[0].lower(), words[1:]
    if keyword == "once":
        _expect(args, 2, "once YYYY-MM-DD HH:MM")
        return Once(datetime.combine(parse_date(args[0]), parse_hhmm(args[1])))
    if keyword == "daily":
        _expect(args, 1, "daily HH:MM")
        return Daily(parse_hhmm(args[0]))
    if keyword == "hourly":
        _expect(args, 1, "hourly :MM")
        return Hourly(parse_minute(args[0]))
    if keyword == "weekdays":
        _expect(args, 1, "weekdays HH:MM")
        return Weekly((0, 1, 2, 3, 4), parse_hhmm(args[0]))
    if keyword == "weekends":
        _expect(args, 1, "weekends HH:MM")
        return Weekly((5, 6), parse_hhmm(args[0]))
    if keyword == "on":
        _expect(args, 2, "on DAY[,DAY...] HH:MM")
        return Weekly(_parse_days(args[0]), parse_hhmm(args[1]))
    raise RuleError(f"unknown rule kind {words[0]!r}")


def _parse_days(text: str) -> tuple[int, ...]:
    days = set()
    for name in text.split(","):
        key = name.strip().lower()
        if key not in DAY_NAMES:
            raise RuleError(f"unknown day {name!r}: use {', '.join(DAY_NAMES)}")
        days.add(DAY_NAMES.index(key))
    return tuple(sorted(days))


def _expect(args: list[str], count: int, shape: str) -> None:
    if len(args) != count:
        raise RuleError(f"expected '{shape}'")
