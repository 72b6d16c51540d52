"""Reading log lines into records."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

#: Known levels, least severe first.
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


class ParseError(ValueError):
    """A line that is not in the expected format."""

    def __init__(self, line_no: int, reason: str) -> None:
        super().__init__(f"line {line_no}: {reason}")
        self.line_no = line_no
        self.reason = reason


@dataclass(frozen=True)
class LogRecord:
    when: datetime
    level: str
    source: str
    message: str


def parse_timestamp(text: str) -> datetime:
    """`2024-03-01T12:00:05Z` -> an aware datetime in UTC."""
    if not text.endswith("Z"):
        raise ValueError(f"timestamp {text!r} is not UTC (no trailing Z)")
    naive = datetime.strptime(text[:-1], "%Y-%m-%dT%H:%M:%S")
    return naive.replace(tzinfo=timezone.utc)


def parse_line(line: str, line_no: int = 1) -> LogRecord:
    """`<timestamp> <LEVEL> [<source>] <message>` -> LogRecord."""
    parts = line.rstrip("\n").split(" ", 3)
    if len(parts) < 4:
        raise ParseError(line_no, "expected timestamp, level, source and message")
    stamp, level, source, message = parts
    try:
        when = parse_timestamp(stamp)
    except ValueError as exc:
        raise ParseError(line_no, str(exc)) from None
    if level not in LEVELS:
        raise ParseError(line_no, f"unknown level {level!r}")
    if len(source) < 3 or not (source.startswith("[") and source.endswith("]")):
        raise ParseError(line_no, f"source {source!r} must look like [name]")
    return LogRecord(when, level, source[1:-1], message.strip())


def parse_lines(lines, strict: bool = True) -> list[LogRecord]:
    """Parse an iterable of lines; blank lines and `#` comments are ignored.

    With `strict=False` malformed lines are dropped instead of raising.
    """
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            records.append(parse_line(line, number))
        except ParseError:
            if strict:
                raise
    return records
