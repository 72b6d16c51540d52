"""The harness's entry point run on the host (no Docker): what the tests' process is given."""

from __future__ import annotations

import subprocess
import sys
from importlib import resources
from pathlib import Path

RUNNER = resources.files("endstate.grading").joinpath("harness/endstate_runner.py")

#: pytest's own suite (test_assertrewrite's pyc tests) reads the caches its rewriter writes in the run.
WRITES_BYTECODE = b'''import pathlib, sys


def test_writes_bytecode():
    assert not sys.dont_write_bytecode
    assert list(pathlib.Path("__pycache__").glob("test_writes.*-pytest-*.pyc"))
'''


def test_the_tests_write_bytecode_as_the_projects_own_runs_do(tmp_path: Path):
    workspace, reports = tmp_path / "ws", tmp_path / "reports"
    workspace.mkdir()
    reports.mkdir()
    (workspace / "test_writes.py").write_bytes(WRITES_BYTECODE)
    # Started as the harness starts it: -B keeps the harness's own imports from writing caches.
    run = subprocess.run([sys.executable, "-s", "-B", str(RUNNER), "pytest", str(reports), "n1", "noguard",
                          str(workspace), "", "--", "-q", "-p", "no:cacheprovider", "test_writes.py"],
                         cwd=workspace, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout
