"""`endstate tasks check` over the whole shipped suite, in real sandboxes."""

from __future__ import annotations

import pytest
from e2e_helpers import TASKS, check_out, endstate

from endstate.task import load_suite

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_every_shipped_task_checks_out():
    count = len(load_suite(TASKS)[0])
    ran = endstate("tasks", "check", "--suite", str(TASKS), "-j", "2")
    check_out(ran)
    assert f"{count} of {count} task(s) check out" in ran.out
    # Every negative control was caught, by the grader the hack names among others.
    assert ran.out.count("ok   ") == count
    # A hack's row stops at the grader the hack names once it has failed (the fixture and
    # solution rows still run every grader). The probe runs before any test process, as in a
    # real run, so a special-cased input reads as caught by the probe and by holdout.
    assert "hack:special-case=fail[probe/holdout]" in ran.out
