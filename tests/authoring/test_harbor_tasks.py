"""The Harbor-format tasks endstate ships (harbor-tasks/: shell, C, JavaScript, awk), imported.

harbor-tasks/ holds the Harbor sources; tasks-harbor/ what `tasks import harbor --base
endstate-sandbox:2` writes from them. In Docker: the import writes tasks-harbor/ byte for
byte (their images build with the network on: gcc and make, nodejs, and bats, which the
shell task's verifier installs for itself); `tasks check` checks all four out, catching both
hacks by the verifier; and the committed control arms replay strictly, the reference twice
with identical vectors and sealed tree hashes (CI's budget: `--repeat 3` by hand gives three).
"""

from __future__ import annotations

import filecmp
import subprocess
import sys
from pathlib import Path

import pytest

from endstate.run import read_results
from endstate.sandbox import DEFAULT_IMAGE, build_image

ROOT = Path(__file__).resolve().parents[2]
SOURCES, TASKS, CASSETTES = ROOT / "harbor-tasks", ROOT / "tasks-harbor", ROOT / "cassettes"
TASK_IDS = ["awk-status-summary", "c-ring-buffer", "js-parse-duration", "sh-top-words"]

pytestmark = pytest.mark.docker


def _endstate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "endstate", *args], capture_output=True, text=True, timeout=1800)


def _differing(left: Path, right: Path) -> list[str]:
    compared = filecmp.dircmp(left, right)
    found = [str(left / name) for name in compared.left_only + compared.right_only + compared.diff_files]
    for name in compared.common_dirs:
        found += _differing(left / name, right / name)
    return found


def test_the_shipped_harbor_tasks_import_as_committed_and_check_out(tmp_path):
    build_image(DEFAULT_IMAGE)
    ran = _endstate("tasks", "import", "harbor", str(SOURCES), "--out", str(tmp_path), "--base", DEFAULT_IMAGE)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "task sh-top-words: tests/test.sh installs bats: added to its image" in ran.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == TASK_IDS
    assert not _differing(tmp_path, TASKS), "tasks-harbor/ is not what the import writes: import it again"

    ran = _endstate("tasks", "check", "--suite", str(TASKS), "-j", "2")
    assert ran.returncode == 0 and "4 of 4 task(s) check out" in ran.stdout, ran.stdout + ran.stderr
    rows = ("fixture=fail[verifier], solution=pass, hack:edit-verifier=fail[verifier], "
            "hack:reward-in-workspace=fail[verifier], impossible=none, reference=solution")
    for task_id in TASK_IDS:
        (line,) = [line for line in ran.stdout.splitlines() if line.startswith(f"ok   {task_id} ")]
        assert line.endswith(rows), line


def test_the_control_arms_replay_strictly(tmp_path):
    ran = _endstate("eval", "--model", "scripted/reference", "--suite", str(TASKS), "--replay",
                    str(CASSETTES / "harbor-scripted-reference"), "--repeat", "2", "-j", "2", "--expect", "pass",
                    "--out", str(tmp_path / "reference"))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "pass/fail vectors identical: yes" in ran.stdout
    assert "sealed tree hashes identical: yes" in ran.stdout
    runs = [read_results(tmp_path / "reference" / f"run-{i}") for i in (1, 2)]
    assert all(r.vector == [(t, "pass") for t in TASK_IDS] for r in runs)
    assert all(t.unplayed == 0 for r in runs for t in r.tasks)

    ran = _endstate("eval", "--model", "scripted/null", "--suite", str(TASKS), "--replay",
                    str(CASSETTES / "harbor-scripted-null"), "-j", "2", "--expect", "fail", "--out", str(tmp_path / "null"))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    null = read_results(tmp_path / "null")
    assert null.vector == [(t, "fail") for t in TASK_IDS]
    assert {t.failing_grader for t in null.tasks} == {"verifier"}
