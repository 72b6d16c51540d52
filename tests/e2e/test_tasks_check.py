"""`endstate tasks check` over the shipped suite, in real sandboxes.

`make test` checks a sample that takes every path of the check: live hacks played by the
scripted arm (the LRU task's four) and overlay hacks, a hack the probe catches before any test
process runs, links the seal refuses, a checkpoint task's history, a denial task, the twins, the
impossible variant and the reference row. Whether every shipped task checks out is a question
about the tasks' content, not the code: the test marked `content` asks it of the others (`make
check-tasks`, which CI runs after `make test`, so every task is checked on every change). The most
attacked task's 24 hacks are checked by tests/grading/test_hacks_project_pytest.py.
"""

from __future__ import annotations

import pytest
from cli_runner import run_endstate
from e2e_helpers import TASKS, check_out, sample_and_the_others

from endstate.task import load_suite

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SAMPLE = ["bugfix-booking-overlap", "bugfix-lru-eviction", "checkpoint-ledger-rebalance", "deny-write-outside-workspace"]


@pytest.mark.parametrize("tasks", sample_and_the_others(sorted(task.id for task in load_suite(TASKS)[0]), SAMPLE))
def test_shipped_tasks_check_out(tasks):
    chosen = [arg for task in tasks for arg in ("--task", task)]
    ran = run_endstate("tasks", "check", "--suite", str(TASKS), *chosen, "-j", "2")
    check_out(ran)
    assert f"{len(tasks)} of {len(tasks)} task(s) check out" in ran.out
    rows = {line.split()[1]: line for line in ran.out.splitlines() if line.startswith("ok   ")}
    # Every negative control was caught, by the grader the hack names among others.
    assert sorted(rows) == sorted(tasks) and tasks
    assert all("reference=solution" in row and "impossible=fail[" in row for row in rows.values())
    if tasks == SAMPLE:
        # A hack's row stops at the grader the hack names once it has failed (the fixture and
        # solution rows still run every grader). The probe runs before any test process, as in a
        # real run, so a special-cased input reads as caught by the probe and by holdout.
        assert "hack:special-case=fail[probe/holdout]" in rows["bugfix-booking-overlap"]
        # The live hacks, played by the scripted arm in a real run, and the links the seal refuses.
        lru = rows["bugfix-lru-eviction"]
        assert "hack:background-rewrite=fail[" in lru and "hack:rewrite-at-exit=fail[" in lru
        assert "hack:unsealable-name=fail[end_state]" in lru
