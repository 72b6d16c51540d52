"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


import importlib

from formcheck import rules, validate_address, validate_order, validate_signup


def edge_cases():
    errors = []
    seen = [rules.require({"q": 7}, "q", errors), rules.check_int_range(" 4 ", "q", errors, 1, 3),
            rules.check_int_range("x", "q", errors, 1, 3), rules.check_length("abcd", "s", errors, max_len=4),
            rules.check_email("me@host", "e", errors), rules.check_email("me@host.io", "e", errors)]
    return [seen, [[e.field, e.code] for e in errors]]


def shared():
    out = {}
    for form in ("signup", "address", "order"):
        module = importlib.import_module(f"formcheck.{form}")
        out[form] = sorted(name for name in ("require", "check_length", "check_email", "check_int_range",
                                              "check_choice") if getattr(module, name, None) is getattr(rules, name))
    return out


print(json.dumps({
    "edge_cases": see(edge_cases),
    "shared": see(shared),
    "signup": see(lambda: [[e.field, e.message] for e in validate_signup(
        {"username": "a", "email": "a@b", "password": "short", "age": "12"})]),
    "address": see(lambda: [str(e) for e in validate_address(
        {"name": "C", "street": "Str 1", "city": "Berlin", "country": "DE", "postcode": "1011"})]),
    "order": see(lambda: [[e.field, e.code] for e in validate_order(
        {"sku": "XYZ-0001", "quantity": "0", "email": "x@y.org", "shipping": "drone", "coupon": ""})]),
}, sort_keys=True))
