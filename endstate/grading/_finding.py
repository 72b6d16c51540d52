"""A detector's finding, and the small helpers every detector shares."""

from __future__ import annotations

import ast
import difflib

import msgspec

from endstate.task import parse_python

__all__ = ["Finding", "added_lines", "parse"]


class Finding(msgspec.Struct, frozen=True):
    """What a detector saw: its `kind`, where (`path`, `line` in the end state's copy), and the
    diff lines that show it ("+" added, "-" removed)."""
    kind: str
    path: str
    line: int
    lines: list[str]


def parse(text: str | None) -> ast.Module | None:
    """The module `text` holds; None when there is none or it does not parse."""
    if text is None:
        return None
    try:
        return parse_python(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def added_lines(before: str | None, after: str | None) -> list[str]:
    """The diff's changed lines, "-" and "+" marked, without context."""
    diff = difflib.unified_diff((before or "").splitlines(), (after or "").splitlines(), lineterm="", n=0)
    return [line for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---"))]
