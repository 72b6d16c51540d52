"""Third-party grader auditors (gradecheck, rlgate, from the venv `make peers` makes) against every
shipped task (tasks/, tasks-real/, tasks-harbor/), grading through `endstate grade`: none fooled,
nothing found but the findings docs/threat-model.md#third-party-auditors answers. Each attack is a
fresh grading container: 446 s at -j 2 on two cores in CI (`make audit` runs the same).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from endstate.task import load_task

ROOT = Path(__file__).resolve().parents[2]
SUITES = ("tasks", "tasks-real", "tasks-harbor")


@pytest.mark.peers
@pytest.mark.docker
def test_gradecheck_and_rlgate_find_nothing_in_any_shipped_task():
    tasks = [p.parent for suite in SUITES for p in sorted((ROOT / suite).glob("*/task.toml"))]
    ran = subprocess.run([sys.executable, str(ROOT / "scripts" / "audit-graders"), "-j", "2",
                          os.environ["ENDSTATE_PEERS"], *map(str, tasks)], capture_output=True, text=True, timeout=3600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[-1] == f"{len(tasks)} task(s) audited by gradecheck and rlgate: 0 fooled or found", ran.stdout
    for task in tasks:  # in the order given, each audited, or left out by name where `endstate grade` cannot take its tree
        said = [line for line in lines if line.startswith(f"{task.name}: ")]
        if said == [f"{task.name}: not audited: it seals files outside /workspace ([seal] paths)"]:
            continue
        assert said[0].startswith(f"{task.name}: gradecheck: ") and said[0].endswith(" verdicts, 0 fooled"), said
        assert said[1].startswith(f"{task.name}: rlgate: ") and all(": answered: " in line for line in said[2:]), said
    sealed = [task.name for task in tasks if load_task(task).manifest.seal.paths]
    assert [line.split(":")[0] for line in lines if ": not audited: " in line] == sealed
    assert len(tasks) >= 22 + 7 + 5 and len(sealed) < len(tasks) // 10


def _script():
    loader = importlib.machinery.SourceFileLoader("audit_graders", str(ROOT / "scripts" / "audit-graders"))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


@pytest.mark.parametrize("layout", ["folder", "module at the top"])
def test_a_readable_held_out_folder_is_answered_only_where_the_agent_reads_other_versions(tmp_path, layout):
    """rlgate's world-readable finding is answered for a task whose held-out tests are newer versions of
    visible files; a held-out file the fixture holds as it is stands as a finding."""
    where = "tests" if layout == "folder" else "test_mod.py"
    held_out = tmp_path / "holdout" / ("tests/test_mod.py" if layout == "folder" else "test_mod.py")
    visible = tmp_path / "fixture" / held_out.relative_to(tmp_path / "holdout")
    for path, text in ((held_out, "def test_new(): pass\n"), (visible, "def test_old(): pass\n")):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    finding = {"probe_id": "forgery.world_readable_tests", "location": where}
    script = _script()
    assert script.answered(tmp_path, finding).startswith("the held-out tests are newer versions of the visible ")
    visible.write_text(held_out.read_text())  # the agent could read the held-out test itself
    assert script.held_out_as_is(tmp_path, where) == [str(held_out.relative_to(tmp_path / "holdout"))]
    assert script.answered(tmp_path, finding) == ""


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
