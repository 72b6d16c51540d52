"""ruff's pyflakes rules hold over the package, the tests and the benchmarks, and mypy's checks over
the package (both configured in pyproject)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> list[str]:
    """A checker of the test extra: beside this interpreter, else on PATH."""
    beside = Path(sys.executable).with_name(name)
    found = str(beside) if beside.is_file() else shutil.which(name)
    assert found, f"{name} is in the test extra: install with `make setup`"
    return [found]


def _ruff() -> list[str]:
    return _tool("ruff")


def test_ruff_finds_nothing():
    done = subprocess.run([*_ruff(), "check", "--no-cache", "--output-format", "concise", "endstate", "tests", "bench"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_sees_an_unused_import(tmp_path):
    (tmp_path / "m.py").write_text("import json\n")
    done = subprocess.run([*_ruff(), "check", "--no-cache", "--isolated", "--select", "F", str(tmp_path / "m.py")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "F401" in done.stdout


def _mypy() -> list[str]:
    return _tool("mypy")


def test_mypy_finds_nothing():
    done = subprocess.run([*_mypy(), "--no-error-summary"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_refuses_an_enum_compared_with_a_string_it_never_equals(tmp_path):
    (tmp_path / "m.py").write_text("import enum\n\n\nclass Mode(enum.Enum):\n    LIVE = 'live'\n\n\n"
                                   "def live(mode: Mode) -> bool:\n    return mode == 'live'\n")
    done = subprocess.run([*_mypy(), "--config-file", str(ROOT / "pyproject.toml"), "--no-incremental",
                           str(tmp_path / "m.py")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 1 and "Non-overlapping equality check" in done.stdout, done.stdout + done.stderr


#: A test case's outcomes as a report gives them: compared as CaseOutcome members, never as strings.
_CASE_OUTCOMES = {"passed", "failure", "skipped"}


def _bare_case_outcomes(source: str) -> list[int]:
    """Lines of `source` that compare something with a case outcome spelled as a string."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for right in node.comparators:
                items = right.elts if isinstance(right, (ast.Tuple, ast.Set, ast.List)) else [right]
                if any(isinstance(i, ast.Constant) and i.value in _CASE_OUTCOMES for i in items):
                    lines.append(node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "count"
              and any(isinstance(a, ast.Constant) and a.value in _CASE_OUTCOMES for a in node.args)):
            lines.append(node.lineno)
    return lines


def test_no_case_outcome_is_compared_with_a_bare_string():
    assert _bare_case_outcomes('if outcome == "failure" or o in ("failure", "error"): n = x.count("skipped")') \
        == [1, 1, 1]
    harness = ROOT / "endstate" / "grading" / "harness"  # runs inside the sandbox, without endstate
    found = [f"{path.relative_to(ROOT)}:{line}" for path in sorted((ROOT / "endstate").rglob("*.py"))
             if harness not in path.parents for line in _bare_case_outcomes(path.read_text())]
    assert found == []
