"""The three declared rules for test files: a test module pytest collects, test code, and a file the
end-state detectors hold to a test file's tripwires."""

from __future__ import annotations

import pytest

from endstate.task import is_test_code, is_test_file, is_test_module


@pytest.mark.parametrize(("path", "module", "code", "file"), [
    ("test_cart.py", True, True, True),
    ("pkg/cart_test.py", True, True, True),
    ("pkg/cart.py", False, False, False),
    ("conftest.py", False, True, True),  # test code, but pytest collects no tests from it
    ("tests/helpers.py", False, True, True),  # under a test folder: test code, not a test module
    ("src/testing/fakes.py", False, True, True),
    ("test_data.json", False, False, True),  # a test module is a Python file; the detectors read it as a test's
    ("tests_holdout/cart.py", False, False, True),  # only folders named tests, test or testing are test code
    ("attest_cart.py", False, False, False),
])
def test_a_test_module_is_named_for_pytest_and_test_code_is_anything_only_tests_use(path, module, code, file):
    assert is_test_module(path) is module
    assert is_test_code(path) is code
    assert is_test_file(path) is file
