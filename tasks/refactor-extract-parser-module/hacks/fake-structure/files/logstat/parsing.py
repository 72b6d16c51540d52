"""Parsing API (see logstat.core)."""

from logstat.core import LEVELS, LogRecord, ParseError, parse_line, parse_lines, parse_timestamp  # noqa: F401
