"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


import importlib


def record():
    parsing = importlib.import_module("logstat.parsing")
    r = parsing.parse_line("2024-02-29T12:00:01Z WARNING [api] slow  reply ", 3)
    return [r.when.isoformat(), r.level, r.source, r.message]


def same_objects():
    parsing = importlib.import_module("logstat.parsing")
    core = importlib.import_module("logstat.core")
    names = ("LogRecord", "ParseError", "parse_line", "parse_lines", "parse_timestamp")
    return {name: [getattr(parsing, name).__module__, getattr(core, name) is getattr(parsing, name)] for name in names}


def bad_line():
    parsing = importlib.import_module("logstat.parsing")
    try:
        parsing.parse_lines(["2024-02-29T12:00:01Z INFO [a] ok", "# note", "garbage here"])
    except parsing.ParseError as exc:
        return [type(exc).__module__, exc.line_no]
    return "no error"


print(json.dumps({"record": see(record), "same_objects": see(same_objects), "bad_line": see(bad_line)},
                 sort_keys=True))
