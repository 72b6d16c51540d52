"""Third-party grader auditors (gradecheck, rlgate, from the venv `make peers` makes) against shipped
tasks of two kinds, grading through `endstate grade`: none fooled, nothing found. A task of tasks/
(pytest graders, held-out tests, about 95 s: each attack is a fresh grading container) and a Harbor
task (its verifier script, about 10 s). `make audit` runs them over every shipped task
(docs/threat-model.md#third-party-auditors); a task of tasks-real/ takes about four minutes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.peers, pytest.mark.docker]

ROOT = Path(__file__).resolve().parents[2]


def test_gradecheck_and_rlgate_find_nothing_in_shipped_tasks_of_two_kinds():
    tasks = [ROOT / "tasks" / "bugfix-lru-eviction", ROOT / "tasks-harbor" / "awk-status-summary"]
    ran = subprocess.run([sys.executable, str(ROOT / "scripts" / "audit-graders"), os.environ["ENDSTATE_PEERS"],
                          *map(str, tasks)], capture_output=True, text=True, timeout=1800)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.splitlines() == [
        "bugfix-lru-eviction: gradecheck: 7 verdicts, 0 fooled",
        "bugfix-lru-eviction: rlgate: 0 finding(s)",
        "awk-status-summary: gradecheck: 6 verdicts, 0 fooled",
        "awk-status-summary: rlgate: 0 finding(s)",
        "2 task(s) audited by gradecheck and rlgate: 0 fooled or found",
    ]
