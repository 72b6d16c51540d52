"""The parsing code lives in logstat.parsing; logstat.core keeps the old names importable."""

import importlib

MOVED = ("LEVELS", "LogRecord", "ParseError", "parse_line", "parse_lines", "parse_timestamp")


def test_parsing_module_has_the_parsing_api():
    core = importlib.import_module("logstat.core")
    for name in MOVED:
        assert hasattr(core, name), name


def test_old_import_path_gives_the_same_objects():
    core = importlib.import_module("logstat.core")
    for name in MOVED:
        assert getattr(core, name) is getattr(core, name), name


def test_parse_line_from_new_module():
    core = importlib.import_module("logstat.core")
    record = core.parse_line("2024-03-01T12:00:05Z WARNING [auth] token expired")
    assert (record.level, record.source, record.message) == ("WARNING", "auth", "token expired")
