"""The schema against the source: every key a component reads, with the same type and default."""

import ast
from pathlib import Path

import pytest

import relay
from relay import COMPONENTS
from relay.config_schema import SCHEMA, check_file, validate

GETTER_TYPES = {"get_str": str, "get_int": int, "get_float": float, "get_bool": bool, "get_list": list}
PACKAGE = Path(relay.__file__).parent


def reads(component):
    """(key, type, default) for every typed getter call in one component's source."""
    tree = ast.parse((PACKAGE / f"{component}.py").read_text(encoding="utf-8"))
    constants = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    constants[target.id] = node.value.value
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in GETTER_TYPES and len(node.args) == 2):
            key_node = node.args[0]
            key = key_node.value if isinstance(key_node, ast.Constant) else constants[key_node.id]
            found.append((key, GETTER_TYPES[node.func.attr], ast.literal_eval(node.args[1])))
    return found


ALL_READS = [item for component in COMPONENTS for item in reads(component)]


def test_every_key_read_is_listed():
    missing = sorted({key for key, _, _ in ALL_READS} - set(SCHEMA))
    assert not missing


def test_nothing_listed_that_is_never_read():
    assert set(SCHEMA) == {key for key, _, _ in ALL_READS}


@pytest.mark.parametrize("key, kind, default", ALL_READS, ids=[f"{k}" for k, _, _ in ALL_READS])
def test_type_and_default_match_the_reader(key, kind, default):
    listed_kind, listed_default = SCHEMA[key]
    assert listed_kind is kind
    assert type(listed_default) is type(default) and listed_default == default


def test_suggestions_across_components():
    assert validate({"webhooks.timout": "3"}) == ["webhooks.timout: unknown setting (did you mean webhooks.timeout?)"]
    assert validate({"retry.max_attempt": "3"}) == ["retry.max_attempt: unknown setting (did you mean retry.max_attempts?)"]
    assert validate({"storage.compres": "yes"}) == ["storage.compres: unknown setting (did you mean storage.compress?)"]


def test_whole_file():
    text = "\n".join([
        "smtp.host = mx.example.org",
        "webhooks.signature_header = X-Sig",
        "metrics.flush_interval = soon",
        "audit.redact_fields = password, api_key",
        "templates.strict = maybe",
    ])
    assert check_file(text) == [
        "metrics.flush_interval: expected a number, got 'soon'",
        "templates.strict: expected true or false, got 'maybe'",
    ]
