import importlib

import pytest

from relay import COMPONENTS, Settings
from relay.config_schema import SCHEMA, check_file, defaults, validate


def as_text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(value)
    return str(value)


def test_schema_size():
    assert len(SCHEMA) == 36


def test_keys_belong_to_components():
    for key in SCHEMA:
        section, _, name = key.partition(".")
        assert section in COMPONENTS and name, key


def test_every_component_has_settings():
    sections = {key.split(".")[0] for key in SCHEMA}
    assert sections == set(COMPONENTS)


def test_types_and_defaults_agree():
    for key, (kind, default) in SCHEMA.items():
        assert kind in (str, int, float, bool, list), key
        assert type(default) is kind, key


def test_known_entries():
    assert SCHEMA["smtp.port"] == (int, 25)
    assert SCHEMA["templates.locales"] == (list, ["en"])
    assert SCHEMA["digest.enabled"] == (bool, True)


@pytest.mark.parametrize("component", COMPONENTS)
def test_schema_defaults_are_the_code_defaults(component):
    """Writing every listed default out explicitly changes nothing."""
    module = importlib.import_module(f"relay.{component}")
    explicit = Settings({key: as_text(value) for key, value in defaults().items()})
    assert module.from_settings(explicit) == module.from_settings(Settings())


def test_defaults_are_fresh_copies():
    first = defaults()
    first["templates.locales"].append("fr")
    assert defaults()["templates.locales"] == ["en"]
    assert SCHEMA["templates.locales"][1] == ["en"]


def test_clean_config():
    assert validate({}) == []
    assert validate({"smtp.port": "587", "retry.jitter": "off", "sms.countries": "NL, FR"}) == []


def test_typo_gets_a_suggestion():
    assert validate({"smtp.hots": "mail"}) == ["smtp.hots: unknown setting (did you mean smtp.host?)"]


def test_unknown_without_suggestion():
    assert validate({"zzz": "1"}) == ["zzz: unknown setting"]


def test_bad_values():
    assert validate({"smtp.port": "twenty-five", "digest.enabled": "maybe"}) == [
        "digest.enabled: expected true or false, got 'maybe'",
        "smtp.port: expected an integer, got 'twenty-five'",
    ]


def test_check_file():
    text = "# production\nsmtp.host = mail.example.org\nqueue.batch_size = many  # tuned\n"
    assert check_file(text) == ["queue.batch_size: expected an integer, got 'many'"]
