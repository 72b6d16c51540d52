"""Third-party grader auditors (gradecheck, rlgate, from the venv `make peers` makes) against one
shipped task, grading through `endstate grade`: none fooled, nothing found. `make audit` runs
them over every shipped task (docs/threat-model.md#third-party-auditors)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.peers, pytest.mark.docker]

ROOT = Path(__file__).resolve().parents[2]


def test_gradecheck_and_rlgate_find_nothing_in_a_shipped_task():
    ran = subprocess.run([sys.executable, str(ROOT / "scripts" / "audit-graders"), os.environ["ENDSTATE_PEERS"],
                          str(ROOT / "tasks" / "bugfix-lru-eviction")], capture_output=True, text=True, timeout=1800)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.splitlines() == [
        "bugfix-lru-eviction: gradecheck: 7 verdicts, 0 fooled",
        "bugfix-lru-eviction: rlgate: 0 finding(s)",
        "1 task(s) audited by gradecheck and rlgate: 0 fooled or found",
    ]
