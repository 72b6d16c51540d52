"""Plain-text reports over parsed records."""

from __future__ import annotations

from logstat.core import busiest_minute, count_by_level, count_by_source, time_span
from logstat.parsing import LEVELS


def format_duration(seconds: float) -> str:
    """75 -> '1m15s', 3725 -> '1h02m05s', 9 -> '9s'."""
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def level_table(records) -> str:
    """One row per level, counts right-aligned."""
    counts = count_by_level(records)
    width = max(len(level) for level in LEVELS)
    return "\n".join(f"{level.ljust(width)} {counts[level]:>5}" for level in LEVELS)


def summary(records, top: int = 3) -> str:
    """The full text report printed by the command line."""
    if not records:
        return "no records"
    lines = [
        f"{len(records)} records over {format_duration(time_span(records))}",
        "",
        level_table(records),
        "",
        "top sources:",
    ]
    for source, count in count_by_source(records)[:top]:
        lines.append(f"  {source}: {count}")
    minute, count = busiest_minute(records)
    lines.append(f"busiest minute: {minute:%Y-%m-%d %H:%M} ({count})")
    return "\n".join(lines)
