"""Deterministic rewriting of tool output before it enters the transcript.

The same work in the sandbox must give the same bytes in every run, or strict
replay (matching requests by hash) breaks. Output carries run-to-run noise:
durations, object addresses, temp directory names, timestamps, pids, colour
codes, carriage returns. Each rule below replaces one kind of noise with a fixed
placeholder. The rules run in order, each until it matches nothing, and none
creates text that an earlier rule would match, so normalising twice changes nothing. Ordinary content (short
hex literals such as `0x10`, versions such as `3.11.7`, `file.py:42`) is left alone.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["NormaliseRule", "NORMALISE_RULES", "normalise_output"]


class NormaliseRule(NamedTuple):
    name: str
    pattern: re.Pattern[str]
    replacement: str


_DURATION = r"\d+(?:\.\d+)?"
# Longer units first, so "12 ms" is not read as "12 m" followed by "s".
_UNIT = r"(?:milliseconds|microseconds|nanoseconds|seconds|secs|sec|ms|µs|us|ns|s)"

NORMALISE_RULES: tuple[NormaliseRule, ...] = (
    # First: removing escape codes can bring a "\r" next to a "\n", or digits together.
    NormaliseRule(
        "ansi-escapes",
        re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]"),
        "",
    ),
    # Each rule that starts with a run of one kind (carriage returns, a line, blanks) starts only
    # where that run does (a lookbehind, or ^): tried from every character of a long run, it would
    # read the rest of the run each time, and a line of 80 KB took 15 s (1 MB: most of an hour).
    NormaliseRule("crlf", re.compile(r"(?<!\r)\r+\n"), "\n"),
    # A bare carriage return redraws the line (progress bars); how often it redrew
    # depends on timing, so keep only what a terminal would finally show.
    NormaliseRule("carriage-return", re.compile(r"^[^\n]*\r(?=[^\n])", re.MULTILINE), ""),
    NormaliseRule(
        "timestamp",
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2}\b)?"
        ),
        "<timestamp>",
    ),
    # "5 passed in 0.12s", "1 failed, 2 passed in 61.20s (0:01:01)", "no tests ran in 0.01s"
    NormaliseRule(
        "pytest-summary",
        re.compile(
            r"\b(passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?|rerun|ran)"
            rf" in {_DURATION}s(?: \(\d+:\d{{2}}:\d{{2}}\))?"
        ),
        r"\1 in <duration>",
    ),
    # "took 1.234s", "12.3 ms", "Ran 4 tests in 0.012s", "real 0m1.234s", and the table
    # `pytest --durations=N` prints: "0.52s call     tests/test_x.py::test_y"
    NormaliseRule(
        "duration",
        re.compile(
            r"\b\d+m\d+\.\d+s\b"
            rf"|(?<=took ){_DURATION}\s?{_UNIT}\b"
            rf"|(?<=in ){_DURATION}\s?{_UNIT}\b"
            rf"|(?<![\w.])\d+\.\d+\s?{_UNIT}\b"
        ),
        "<duration>",
    ),
    NormaliseRule("hex-address", re.compile(r"\b0x[0-9a-fA-F]{6,}\b"), "0x<addr>"),
    # pytest's tmp_path base, /tmp/pytest-of-<user>/pytest-<n>/
    NormaliseRule(
        "pytest-tmp",
        re.compile(r"/tmp/pytest-of-[^/\s]+/pytest-\d+"),
        "/tmp/pytest-of-<user>/pytest-<n>",
    ),
    # tempfile.mkdtemp() and friends (/tmp/tmpk3j_x9ab), mktemp (/tmp/tmp.AbC123xYz0)
    NormaliseRule(
        "temp-path",
        re.compile(r"(/(?:var/)?tmp)/tmp(?:[a-z0-9_]{6,12}|\.[A-Za-z0-9]{6,12})(?![\w])"),
        r"\1/<tmp>",
    ),
    # Possessive: blanks given back could never be the `=` or the digits, only be tried again.
    NormaliseRule("pid", re.compile(r"\b(pid|PID|Pid)(\s*+[=:]?+\s*+)\d+\b"), r"\1\2<pid>"),
    NormaliseRule("trailing-whitespace", re.compile(r"(?<![ \t])[ \t]+$", re.MULTILINE), ""),
)


def normalise_output(text: str) -> str:
    """Replace run-to-run noise in tool output with fixed placeholders."""
    for rule in NORMALISE_RULES:
        # Deleting one escape code can complete another ("\x1b\x1b[0m[31m"), so each
        # rule runs until it finds nothing. This ends: every rule deletes text or
        # turns digits into a placeholder it cannot match again.
        count = 1
        while count:
            text, count = rule.pattern.subn(rule.replacement, text)
    return text
