"""Held-out checks: the parsing code really moved, and behaves as before."""

import ast
import importlib
import inspect
from datetime import datetime, timezone

import pytest

MOVED = ("LogRecord", "ParseError", "parse_line", "parse_lines", "parse_timestamp")


def _module_tree(name):
    return ast.parse(inspect.getsource(importlib.import_module(name)))


def test_moved_names_are_defined_in_parsing():
    parsing = importlib.import_module("logstat.parsing")
    for name in MOVED:
        assert getattr(parsing, name).__module__ == "logstat.parsing", name


def test_core_no_longer_defines_parsing_code():
    defined = {
        node.name
        for node in _module_tree("logstat.core").body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    }
    assert not defined & set(MOVED)
    assert {"count_by_level", "count_by_source", "filter_records", "busiest_minute", "time_span"} <= defined


def test_parsing_does_not_import_core():
    for node in ast.walk(_module_tree("logstat.parsing")):
        if isinstance(node, ast.ImportFrom):
            assert not (node.module or "").endswith("core"), node.module
        if isinstance(node, ast.Import):
            assert all(alias.name != "logstat.core" for alias in node.names)


@pytest.mark.parametrize("module", ["logstat", "logstat.cli", "logstat.report"])
def test_callers_import_parsing_names_from_parsing(module):
    for node in ast.walk(_module_tree(module)):
        # `from logstat.core import ...`, or the same written relative to the package: `from .core import ...`
        if isinstance(node, ast.ImportFrom) and (node.module, node.level) in (("logstat.core", 0), ("core", 1)):
            imported = {alias.name for alias in node.names}
            assert not imported & {"LEVELS", *MOVED}, (module, imported)


def test_behaviour_on_new_inputs():
    parsing = importlib.import_module("logstat.parsing")
    core = importlib.import_module("logstat.core")
    record = parsing.parse_line("2023-12-31T23:59:59Z DEBUG [cron] nightly job  finished \n", 4)
    assert record == core.LogRecord(
        datetime(2023, 12, 31, 23, 59, 59, tzinfo=timezone.utc), "DEBUG", "cron", "nightly job  finished"
    )
    with pytest.raises(core.ParseError, match="line 9: source '\\[\\]'"):
        parsing.parse_line("2023-12-31T23:59:59Z INFO [] empty source", 9)
    lines = ["# header", "bad", "", "2023-12-31T23:59:59Z ERROR [disk] full"]
    assert [r.source for r in core.parse_lines(lines, strict=False)] == ["disk"]
    with pytest.raises(parsing.ParseError) as info:
        parsing.parse_lines(lines)
    assert info.value.line_no == 2


def test_parse_errors_keep_their_line_and_reason():
    parsing = importlib.import_module("logstat.parsing")
    with pytest.raises(parsing.ParseError) as info:
        parsing.parse_line("2023-12-31T23:59:59Z INFO")
    assert (info.value.line_no, info.value.reason) == (1, "expected timestamp, level, source and message")
    assert str(info.value) == "line 1: expected timestamp, level, source and message"
    with pytest.raises(parsing.ParseError) as info:
        parsing.parse_line("2023-12-31T23:59:59Z LOUD [api] hello", 7)
    assert (info.value.line_no, info.value.reason) == (7, "unknown level 'LOUD'")


@pytest.mark.parametrize("source", ["[api", "api]", "api", "[]"])
def test_a_source_needs_both_brackets_around_a_name(source):
    parsing = importlib.import_module("logstat.parsing")
    with pytest.raises(parsing.ParseError, match="must look like \\[name\\]"):
        parsing.parse_line(f"2023-12-31T23:59:59Z INFO {source} hello", 3)
    assert parsing.parse_line("2023-12-31T23:59:59Z INFO [a] hello").source == "a"


def test_records_are_frozen():
    parsing = importlib.import_module("logstat.parsing")
    record = parsing.parse_line("2023-12-31T23:59:59Z INFO [api] hello")
    with pytest.raises(AttributeError):
        record.level = "ERROR"
    assert record.level == "INFO"
