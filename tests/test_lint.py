"""ruff's pyflakes rules hold over the package, the tests and the benchmarks, and mypy's checks over
the package (both configured in pyproject)."""

from __future__ import annotations

import ast
import os
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


#: mypy's cache, kept outside the clone: a fresh clone otherwise checks every module and the SDKs' stubs
#: cold (72-150 s of a test worker); with it, 3 s. mypy checks each module's source against what it cached,
#: so a clone of any commit reads the modules that changed again (the test after this one).
MYPY_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "endstate" / "mypy"


def test_mypy_finds_nothing():
    done = subprocess.run([*_mypy(), "--no-error-summary", "--cache-dir", str(MYPY_CACHE)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_an_error_in_another_clone_of_the_package_through_the_shared_cache(tmp_path):
    """The cache the previous test left is another clone's: a module changed here is read again."""
    shutil.copytree(ROOT / "endstate", tmp_path / "endstate", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    with (tmp_path / "endstate" / "pytest_plugin.py").open("a") as module:  # a leaf: few modules to read again
        module.write("\n\ndef planted() -> int:\n    return 'not an int'\n")
    done = subprocess.run([*_mypy(), "--no-error-summary", "--cache-dir", str(MYPY_CACHE)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith("endstate/pytest_plugin.py:") and "[return-value]" in done.stdout, done.stdout
    assert len(done.stdout.splitlines()) == 1, done.stdout


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
