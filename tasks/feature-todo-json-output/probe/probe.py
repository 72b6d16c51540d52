"""Run as a plain program against the end state; prints what it observes as JSON."""

import json


def see(call):
    """What a call returns, or the name of what it raised."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}"


import io
import tempfile
from datetime import date
from pathlib import Path

from todo.cli import main


def session():
    with tempfile.TemporaryDirectory() as folder:
        store = str(Path(folder) / "tasks.json")
        seen = []

        def run(*argv):
            out, err = io.StringIO(), io.StringIO()
            try:
                code = main(["--file", store, *argv], out=out, err=err, today=date(2024, 8, 20))
            except SystemExit as exc:
                code = f"exit {exc.code}"
            seen.append([code, out.getvalue(), err.getvalue()])

        run("add", "Water plants", "--due", "2024-08-19", "--tag", "home")
        run("add", "Tax return", "--due", "2024-09-01", "--tag", "admin", "--priority", "2")
        run("add", "Crème brûlée", "--tag", "home", "--tag", "cook")
        run("done", "2")
        run("list", "--status", "all", "--format", "json")
        run("list", "--tag", "home", "--sort", "due", "--format", "json")
        run("list", "--status", "done", "--tag", "cook", "--format", "json")
        run("show", "3", "--format", "json")
        run("show", "7", "--format", "json")
        run("list", "--format", "xml")
        return seen


print(json.dumps({"session": see(session)}, sort_keys=True))
