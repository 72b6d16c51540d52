"""The shared rules in formcheck.rules, used by every form."""

import importlib
import inspect

import pytest


def rules():
    try:
        return importlib.import_module("formcheck.rules")
    except ImportError:
        pytest.skip("formcheck.rules not written yet")


def test_require():
    errors = []
    assert rules().require({"a": " x "}, "a", errors) == " x "
    assert rules().require({"a": "   "}, "a", errors) is None
    assert rules().require({}, "b", errors) is None
    assert [(e.field, e.code, e.message) for e in errors] == [("a", "required", "is required"), ("b", "required", "is required")]


def test_check_length():
    errors = []
    assert rules().check_length("abcd", "f", errors, 2, 4) is True
    assert rules().check_length("a", "f", errors, min_len=2) is False
    assert [e.message for e in errors] == ["must be at least 2 characters"]


def test_check_email_and_int_range():
    errors = []
    assert rules().check_email("x@y.io", "e", errors) is True
    assert rules().check_int_range(" 42 ", "n", errors, 1, 99) == 42
    assert rules().check_int_range("100", "n", errors, 1, 99) is None
    assert [e.code for e in errors] == ["out_of_range"]


def test_check_choice():
    errors = []
    assert rules().check_choice("b", "f", errors, ("a", "b")) is True
    assert rules().check_choice("c", "f", errors, ("a", "b")) is False
    assert [e.message for e in errors] == ["must be one of: a, b"]


def test_signup_has_no_private_helpers_left():
    signup = importlib.import_module("formcheck.signup")
    if hasattr(signup, "_required"):
        pytest.skip("signup still has its helpers")
    own = [name for name, obj in vars(signup).items() if inspect.isfunction(obj) and obj.__module__ == signup.__name__]
    assert own == ["validate_signup"]
