"""What counts as a test file, declared once.

Three questions have three answers, so there are three rules with names that say which:

    is_test_module(path)   a module pytest collects by its default names: test_*.py, *_test.py
    is_test_code(path)     code only the tests use: a test module, a conftest.py, or any file
                           under a folder named tests, test or testing
    is_test_file(path)     what the end-state detectors hold to a test file's tripwires: test
                           code, any file named test_* (data a test reads too), and any file
                           under the held-out folder tests_holdout
"""

from __future__ import annotations

import posixpath

__all__ = ["TEST_FOLDERS", "is_test_code", "is_test_file", "is_test_module"]

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


def is_test_file(path: str) -> bool:
    """A file the end-state detectors hold to a test file's tripwires (endstate.grading._integrity):
    test code, a file of any kind named test_*, or one under the held-out folder tests_holdout."""
    return (is_test_code(path) or posixpath.basename(path).startswith("test_")
            or "tests_holdout" in path.split("/")[:-1])
