"""The tasks made by `tasks new` from real fixes check out as vendored, with no edit.

Their suites have about 720 tests each, so their JUnit reports are far past the
64 KiB cap on command output: this passes once test reports are read as files
(issue 9), and is the proof that a large report grades correctly.
"""

from __future__ import annotations

import pytest

from endstate.task import load_suite

from e2e_helpers import ROOT, endstate

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TASKS_REAL = ROOT / "tasks-real"


def test_the_real_tasks_check_out():
    tasks, errors = load_suite(TASKS_REAL)
    assert not errors and len(tasks) >= 2
    assert any(t.manifest.sandbox.dockerfile for t in tasks)  # one runs in its own image
    ran = endstate("tasks", "check", "--suite", str(TASKS_REAL), "-j", "2")
    assert ran.code == 0, ran
    assert f"{len(tasks)} of {len(tasks)} task(s) check out" in ran.out
    assert ran.out.count("reference=solution") == len(tasks)
