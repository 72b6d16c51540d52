"""Third-party grader auditors (gradecheck, rlgate, from the venv `make peers` makes) against shipped
tasks, grading through `endstate grade`: none fooled, nothing found. A task of tasks/ (pytest
graders, held-out tests, about 95 s: each attack is a fresh grading container) and every Harbor
task of tasks-harbor/ (its verifier script, about 10 s each). `make audit` runs them over every shipped task
(docs/threat-model.md#third-party-auditors); a task of tasks-real/ takes about four minutes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.peers
@pytest.mark.docker
def test_gradecheck_and_rlgate_find_nothing_in_a_pytest_task_and_every_harbor_task():
    harbor = sorted(p.parent for p in (ROOT / "tasks-harbor").glob("*/task.toml"))
    tasks = [ROOT / "tasks" / "bugfix-lru-eviction", *harbor]
    ran = subprocess.run([sys.executable, str(ROOT / "scripts" / "audit-graders"), os.environ["ENDSTATE_PEERS"],
                          *map(str, tasks)], capture_output=True, text=True, timeout=2400)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[:2] == ["bugfix-lru-eviction: gradecheck: 7 verdicts, 0 fooled", "bugfix-lru-eviction: rlgate: 0 finding(s)"]
    for task in harbor:  # each audited, or left out by name where `endstate grade` cannot take its tree
        said = [line for line in lines if line.startswith(f"{task.name}: ")]
        assert said in ([f"{task.name}: not audited: it seals files outside /workspace ([seal] paths)"],
                        [said[0], f"{task.name}: rlgate: 0 finding(s)"]), said
        assert said[0].endswith(("verdicts, 0 fooled", "([seal] paths)")), said
    assert len(harbor) >= 5 and lines[-1] == f"{len(tasks)} task(s) audited by gradecheck and rlgate: 0 fooled or found"


@pytest.mark.parametrize("args", [["/nonexistent-bin", "tasks/bugfix-lru-eviction"], ["{peers}", "tasks/no-such-task"]])
def test_a_wrong_folder_is_one_line_naming_it(args, tmp_path):
    for tool in ("gradecheck", "rlgate"):  # a bin folder that holds both, for the second case
        (tmp_path / tool).write_text("#!/bin/sh\nexit 1\n")
    args = [arg.format(peers=tmp_path) for arg in args]
    ran = subprocess.run([sys.executable, str(ROOT / "scripts" / "audit-graders"), *args], capture_output=True,
                         text=True, timeout=60, cwd=ROOT)
    assert ran.returncode == 1 and ran.stdout == "", ran
    assert len(ran.stderr.splitlines()) == 1 and "Traceback" not in ran.stderr, ran.stderr
    assert args[0 if "nonexistent" in args[0] else 1] in ran.stderr
