"""Aggregating parsed log records."""

from __future__ import annotations

from collections import Counter

# Parsing moved to logstat.parsing. These names are imported here so that
# `from logstat.core import parse_line` (and the rest) keeps working.
from logstat.parsing import (  # noqa: F401
    LEVELS,
    LogRecord,
    ParseError,
    parse_line,
    parse_lines,
    parse_timestamp,
)


def count_by_level(records) -> dict[str, int]:
    """Records per level; every known level is present, zero if unseen."""
    counts = dict.fromkeys(LEVELS, 0)
    for record in records:
        counts[record.level] += 1
    return counts


def count_by_source(records, level: str | None = None) -> list[tuple[str, int]]:
    """(source, count) pairs, most frequent first, ties by name."""
    counter = Counter(r.source for r in records if level is None or r.level == level)
    return sorted(counter.items(), key=lambda item: (-item[1], item[0]))


def filter_records(records, *, level=None, source=None, since=None, until=None) -> list[LogRecord]:
    """Records matching every given criterion.

    `level` is a minimum severity; `since` is inclusive and `until` exclusive.
    """
    minimum = LEVELS.index(level) if level else 0
    kept = []
    for record in records:
        if LEVELS.index(record.level) < minimum:
            continue
        if source is not None and record.source != source:
            continue
        if since is not None and record.when < since:
            continue
        if until is not None and record.when >= until:
            continue
        kept.append(record)
    return kept


def busiest_minute(records):
    """(minute, count) for the minute with most records; the earliest wins ties.

    None when there are no records.
    """
    counter = Counter(r.when.replace(second=0, microsecond=0) for r in records)
    if not counter:
        return None
    return min(counter.items(), key=lambda item: (-item[1], item[0]))


def time_span(records) -> float:
    """Seconds between the first and last record; 0.0 for fewer than two."""
    if len(records) < 2:
        return 0.0
    times = [r.when for r in records]
    return (max(times) - min(times)).total_seconds()
