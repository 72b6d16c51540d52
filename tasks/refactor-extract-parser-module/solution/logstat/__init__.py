"""logstat: summarise structured application logs."""

from logstat.core import busiest_minute, count_by_level, count_by_source, filter_records, time_span
from logstat.parsing import LEVELS, LogRecord, ParseError, parse_line, parse_lines

__all__ = [
    "LEVELS",
    "LogRecord",
    "ParseError",
    "busiest_minute",
    "count_by_level",
    "count_by_source",
    "filter_records",
    "parse_line",
    "parse_lines",
    "time_span",
]

__version__ = "0.4.1"
