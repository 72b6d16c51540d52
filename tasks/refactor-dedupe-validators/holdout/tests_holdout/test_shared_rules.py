"""Held-out checks: every form uses formcheck.rules, and the forms behave as before."""

import ast
import importlib
import inspect

import pytest

from formcheck import rules, validate_address, validate_order, validate_signup

FORMS = {"formcheck.signup": "validate_signup", "formcheck.address": "validate_address", "formcheck.order": "validate_order"}
USES = {
    "formcheck.signup": {"require", "check_length", "check_email", "check_int_range"},
    "formcheck.address": {"require", "check_length", "check_choice"},
    "formcheck.order": {"require", "check_length", "check_email", "check_int_range", "check_choice"},
}


def _tree(module_name):
    return ast.parse(inspect.getsource(importlib.import_module(module_name)))


@pytest.mark.parametrize("module_name", sorted(FORMS))
def test_form_modules_define_only_their_validator(module_name):
    tree = _tree(module_name)
    functions = [node.name for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    assert functions == [FORMS[module_name]]
    assigned = {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}
    assert "EMAIL_RE" not in assigned


@pytest.mark.parametrize("module_name", sorted(USES))
def test_form_modules_call_the_shared_rules(module_name):
    module = importlib.import_module(module_name)
    called = set()
    for node in ast.walk(_tree(module_name)):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                called.add(node.func.id)
                if node.func.id in USES[module_name]:
                    assert getattr(module, node.func.id) is getattr(rules, node.func.id)
            elif isinstance(node.func, ast.Attribute):
                called.add(node.func.attr)
    assert USES[module_name] <= called


def test_rules_edge_cases():
    errors = []
    assert rules.require({"n": 0}, "n", errors) == "0"
    assert rules.check_int_range("-3", "n", errors, -5, 5) == -3
    assert rules.check_int_range("", "n", errors, 1, 2) is None
    assert rules.check_length("abc", "s", errors, max_len=2) is False
    assert rules.check_email(" a.b@c.de ", "e", errors) is True
    assert rules.check_email("a b@c.de", "e", errors) is False
    assert [(e.field, e.code) for e in errors] == [("n", "not_int"), ("s", "too_long"), ("e", "bad_email")]


def test_forms_on_new_inputs():
    assert validate_signup({"username": "x_9", "email": "x@y.nl", "password": "12345678", "age": "120"}) == []
    signup = validate_signup({"username": "abc", "email": "x@y", "password": "1234567", "age": " 121 "})
    assert [(e.field, e.message) for e in signup] == [
        ("email", "is not a valid email address"),
        ("password", "must be at least 8 characters"),
        ("age", "must be between 13 and 120"),
    ]
    address = validate_address({"name": "B", "street": "Rue 9", "city": "Paris", "country": "fr", "postcode": "7500"})
    assert [str(e) for e in address] == ["postcode is not a valid FR postcode"]
    order = validate_order({"sku": "ABC-1234", "quantity": "99", "email": "a@b.co", "shipping": " PICKUP ", "coupon": "C" * 13})
    assert [(e.field, e.code) for e in order] == [("coupon", "too_long")]


VALID = {
    validate_signup: {"username": "x_9", "email": "x@y.nl", "password": "12345678", "age": "30"},
    validate_address: {"name": "B", "street": "Rue 9", "city": "Paris", "country": "fr", "postcode": "75001"},
    validate_order: {"sku": "ABC-1234", "quantity": "9", "email": "a@b.co", "shipping": "pickup", "coupon": "SAVE"},
}
LIMITS = [  # (form, field, shortest allowed or None, longest allowed or None)
    (validate_signup, "username", 3, 20),
    (validate_signup, "password", 8, None),
    (validate_address, "name", None, 60),
    (validate_address, "street", 3, 80),
    (validate_address, "city", None, 40),
    (validate_order, "coupon", 4, 12),
]


@pytest.mark.parametrize(("form", "field", "shortest", "longest"), LIMITS,
                         ids=[f"{form.__name__}-{field}" for form, field, _, _ in LIMITS])
def test_every_length_limit_is_inclusive(form, field, shortest, longest):
    def codes(length):
        return [(e.field, e.code) for e in form({**VALID[form], field: "a" * length})]
    if shortest is not None:
        assert codes(shortest) == []
        assert codes(shortest - 1) == [(field, "too_short")]
    if longest is not None:
        assert codes(longest) == []
        assert codes(longest + 1) == [(field, "too_long")]


def test_check_length_has_no_minimum_by_default():
    errors = []
    assert rules.check_length("", "s", errors) is True
    assert rules.check_length("x" * 500, "s", errors) is True
    assert errors == []


@pytest.mark.parametrize(("form", "field", "low", "high"), [(validate_signup, "age", 13, 120),
                                                            (validate_order, "quantity", 1, 99)])
def test_every_number_range_is_inclusive(form, field, low, high):
    def codes(number):
        return [(e.field, e.code) for e in form({**VALID[form], field: str(number)})]
    assert codes(low) == [] and codes(high) == []
    assert codes(low - 1) == [(field, "out_of_range")] and codes(high + 1) == [(field, "out_of_range")]
