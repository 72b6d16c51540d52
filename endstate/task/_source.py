"""Python source of a task's files, parsed one thread at a time.

CPython 3.11's parser can fail with "AST constructor recursion depth mismatch" when two
threads build syntax trees at once, and tasks are checked, imported and graded in
threads. Every parse of task source goes through this one lock.
"""

from __future__ import annotations

import ast
import threading

__all__ = ["literal_python", "parse_python"]

_PARSING = threading.Lock()


def parse_python(source: str | bytes) -> ast.Module:
    """`ast.parse(source)`, serialised across threads; raises SyntaxError as it does."""
    with _PARSING:
        return ast.parse(source)


def literal_python(source: str) -> object:
    """`ast.literal_eval(source)` under the same lock: it parses the text first."""
    with _PARSING:
        return ast.literal_eval(source)
