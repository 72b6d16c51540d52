"""What of a project's shared configuration files is test configuration.

`conftest.py`, `pytest.ini` and the interpreter's start-up hooks are test configuration
whole: any change to them is tampering. `pyproject.toml`, `setup.cfg` and `tox.ini` are
shared: a real fix may add a dependency or bump a tool's setting there. Of these, only the
sections pytest reads count ([tool.pytest.ini_options] and pytest 9's [tool.pytest];
[tool:pytest]; [pytest]): a file whose pytest section reads the same as in the fixture was
not changed as test configuration. A file that was added or removed, or that no longer
parses, still counts whole (it can change which file pytest takes its settings from).
"""

from __future__ import annotations

import configparser
import tomllib
from typing import Any

__all__ = ["SHARED_CONFIG", "pytest_section_changed"]

#: Files that hold more than test configuration, by the sections pytest reads in each.
SHARED_CONFIG = {"pyproject.toml": None, "setup.cfg": ("tool:pytest",), "tox.ini": ("pytest",)}


class _Unreadable(Exception):
    pass


def _pytest_section(name: str, text: str) -> Any:
    if name == "pyproject.toml":
        try:
            return tomllib.loads(text).get("tool", {}).get("pytest")
        except (tomllib.TOMLDecodeError, AttributeError, RecursionError):  # nested past the parser's depth
            raise _Unreadable from None
    parser = configparser.RawConfigParser(strict=False)
    parser.optionxform = str  # keys as written
    try:
        parser.read_string(text)
    except configparser.Error:
        raise _Unreadable from None
    return {section: dict(parser.items(section)) for section in SHARED_CONFIG[name] if parser.has_section(section)}


def pytest_section_changed(name: str, before: str | None, after: str | None) -> bool:
    """Whether a change to the shared file `name` (its text in the fixture and in the end state,
    None where it is missing) changes what pytest reads from it."""
    if before is None or after is None:
        return True
    try:
        return _pytest_section(name, before) != _pytest_section(name, after)
    except _Unreadable:
        return True
