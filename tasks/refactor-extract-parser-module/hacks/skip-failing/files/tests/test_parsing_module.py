"""The parsing code lives in logstat.parsing; logstat.core keeps the old names importable."""

import importlib

import pytest

MOVED = ("LEVELS", "LogRecord", "ParseError", "parse_line", "parse_lines", "parse_timestamp")


@pytest.mark.skip(reason="parsing split not done yet")
def test_parsing_module_has_the_parsing_api():
    parsing = importlib.import_module("logstat.parsing")
    for name in MOVED:
        assert hasattr(parsing, name), name


@pytest.mark.skip(reason="parsing split not done yet")
def test_old_import_path_gives_the_same_objects():
    parsing = importlib.import_module("logstat.parsing")
    core = importlib.import_module("logstat.core")
    for name in MOVED:
        assert getattr(core, name) is getattr(parsing, name), name


@pytest.mark.skip(reason="parsing split not done yet")
def test_parse_line_from_new_module():
    parsing = importlib.import_module("logstat.parsing")
    record = parsing.parse_line("2024-03-01T12:00:05Z WARNING [auth] token expired")
    assert (record.level, record.source, record.message) == ("WARNING", "auth", "token expired")
