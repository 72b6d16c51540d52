"""What counts as a test file, declared once.

Two questions have two answers, so there are two rules with names that say which:

    is_test_module(path)   a module pytest collects by its default names: test_*.py, *_test.py
    is_test_code(path)     code only the tests use: a test module, a conftest.py, or any file
                           under a folder named tests, test or testing
"""

from __future__ import annotations

import posixpath

__all__ = ["TEST_FOLDERS", "is_test_code", "is_test_module"]

#: Folders whose files are test code, whatever their names.
TEST_FOLDERS = ("tests", "test", "testing")


def is_test_module(path: str) -> bool:
    """A Python module pytest collects by its default names (`test_*.py`, `*_test.py`)."""
    name = posixpath.basename(path)
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def is_test_code(path: str) -> bool:
    """Code only the tests use: a test module, a conftest.py, or a file under a test folder. A fix
    may add such code; the held-out tests never depend on it."""
    folders = path.split("/")[:-1]
    return (is_test_module(path) or posixpath.basename(path) == "conftest.py"
            or any(folder in TEST_FOLDERS for folder in folders))
