"""The harness's entry point run on the host (no Docker): what the tests' process is given."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

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


#: unittest's own quiet stop, raised by the code under test where it would fail (its name spelled apart).
QUIET_STOP = b'''import importlib
import unittest


def broken():
    raise getattr(importlib.import_module("unittest.case"), "_Should" "Stop")()


class T(unittest.TestCase):
    def test_quietly_stopped(self):
        self.assertEqual(broken(), 3)

    @unittest.expectedFailure
    def test_subtests_still_stop_quietly(self):
        for n in (1, 2):
            with self.subTest(n=n):  # the first failure ends the test here, by unittest's own quiet stop
                self.assertEqual(n, 0)
'''


@pytest.mark.parametrize("runner, args", [("pytest", ["-q", "-p", "no:cacheprovider", "test_stop.py"]),
                                          ("unittest", ["test_stop"])])
def test_a_test_the_code_under_test_ends_with_unittests_quiet_stop_fails(tmp_path: Path, runner, args):
    workspace, reports = tmp_path / "ws", tmp_path / "reports"
    workspace.mkdir()
    reports.mkdir()
    (workspace / "test_stop.py").write_bytes(QUIET_STOP)
    run = subprocess.run([sys.executable, "-s", "-B", str(RUNNER), runner, str(reports), "n1", "guard",
                          str(workspace), "", "--", *args], cwd=workspace, capture_output=True, text=True, timeout=120)
    report = (reports / "n1" / "report.xml").read_text()
    assert run.returncode == 1, run.stdout + run.stderr
    cases = dict(re.findall(r'name="(test_\w+)"[^>]*>\s*<(failure|skipped)', report))
    assert cases == {"test_quietly_stopped": "failure", "test_subtests_still_stop_quietly": "skipped"}, report
    # The runner's own stricter unittest is what the guard watches, never a finding (the host's plugins may be).
    assert not [f for f in json.loads((reports / "n1" / "guard.json").read_text())["findings"] if "unittest" in f]
