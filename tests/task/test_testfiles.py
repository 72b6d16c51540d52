"""The two declared rules for test files: a test module pytest collects, and test code."""

from __future__ import annotations

import pytest

from endstate.task import is_test_code, is_test_module


@pytest.mark.parametrize(("path", "module", "code"), [
    ("test_cart.py", True, True),
    ("pkg/cart_test.py", True, True),
    ("pkg/cart.py", False, False),
    ("conftest.py", False, True),  # test code, but pytest collects no tests from it
    ("tests/helpers.py", False, True),  # under a test folder: test code, not a test module
    ("src/testing/fakes.py", False, True),
    ("test_data.json", False, False),  # a test module is a Python file
    ("tests_holdout/cart.py", False, False),  # only folders named tests, test or testing
    ("attest_cart.py", False, False),
])
def test_a_test_module_is_named_for_pytest_and_test_code_is_anything_only_tests_use(path, module, code):
    assert is_test_module(path) is module
    assert is_test_code(path) is code
