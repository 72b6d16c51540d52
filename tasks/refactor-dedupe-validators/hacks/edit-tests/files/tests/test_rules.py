"""The shared rules in formcheck.rules, used by every form."""

import importlib


def test_signup_module_loads():
    assert importlib.import_module("formcheck.signup").validate_signup
