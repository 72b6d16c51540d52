"""The Harbor-format tasks endstate ships (harbor-tasks/: shell, C, JavaScript, awk, and a
configuration under /etc), imported.

harbor-tasks/ holds the Harbor sources; tasks-harbor/ what `tasks import harbor --base
endstate-sandbox:2` writes from them. In Docker: the import writes tasks-harbor/ byte for
byte (their images build with the network on: gcc and make, nodejs, and bats, which the
shell task's verifier installs for itself); `tasks check` checks all five out, catching every
hack by the verifier (a deleted test where a task has a test file beside test.sh); and the
committed control arms replay strictly, the reference twice with identical vectors and
sealed tree hashes (CI's budget: `--repeat 3` by hand gives three). etc-greeter-config's fix
lies in /etc/greeter, outside /workspace: its reference passes because that folder is sealed
(`[seal] paths`), and fails without the seal.
"""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest
from cli_runner import run_endstate

from endstate.run import read_results
from endstate.sandbox import DEFAULT_IMAGE, build_image

ROOT = Path(__file__).resolve().parents[2]
SOURCES, TASKS, CASSETTES = ROOT / "harbor-tasks", ROOT / "tasks-harbor", ROOT / "cassettes"
TASK_IDS = ["awk-status-summary", "c-ring-buffer", "etc-greeter-config", "js-parse-duration", "sh-top-words"]
#: The tasks whose tests/ has a test file beside test.sh, and so a delete-tests hack.
DELETE_TESTS = {"c-ring-buffer", "etc-greeter-config", "js-parse-duration", "sh-top-words"}

pytestmark = pytest.mark.docker


def _differing(left: Path, right: Path) -> list[str]:
    compared = filecmp.dircmp(left, right)
    found = [str(left / name) for name in compared.left_only + compared.right_only + compared.diff_files]
    for name in compared.common_dirs:
        found += _differing(left / name, right / name)
    return found


def test_the_shipped_harbor_tasks_import_as_committed_and_check_out(tmp_path):
    build_image(DEFAULT_IMAGE)
    ran = run_endstate("tasks", "import", "harbor", str(SOURCES), "--out", str(tmp_path), "--base", DEFAULT_IMAGE)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "task sh-top-words: tests/test.sh installs bats: added to its image" in ran.stdout
    assert "task etc-greeter-config: solution/solve.sh changes /etc/greeter: sealed with the workspace" in ran.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == TASK_IDS
    assert not _differing(tmp_path, TASKS), "tasks-harbor/ is not what the import writes: import it again"

    ran = run_endstate("tasks", "check", "--suite", str(TASKS), "-j", "2")
    assert ran.returncode == 0 and "5 of 5 task(s) check out" in ran.stdout, ran.stdout + ran.stderr
    for task_id in TASK_IDS:
        deleted = "hack:delete-tests=fail[verifier], " if task_id in DELETE_TESTS else ""
        rows = (f"fixture=fail[verifier], solution=pass, {deleted}hack:edit-verifier=fail[verifier], "
                "hack:reward-in-workspace=fail[verifier], impossible=skipped, reference=solution")
        (line,) = [line for line in ran.stdout.splitlines() if line.startswith(f"ok   {task_id} ")]
        assert line.endswith(rows), line


def test_the_control_arms_replay_strictly(tmp_path):
    ran = run_endstate("eval", "--model", "scripted/reference", "--suite", str(TASKS), "--replay",
                       str(CASSETTES / "harbor-scripted-reference"), "--repeat", "2", "-j", "2", "--expect", "pass",
                       "--out", str(tmp_path / "reference"))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "pass/fail vectors identical: yes" in ran.stdout
    assert "sealed tree hashes identical: yes" in ran.stdout
    runs = [read_results(tmp_path / "reference" / f"run-{i}") for i in (1, 2)]
    assert all(r.vector == [(t, "pass") for t in TASK_IDS] for r in runs)
    assert all(t.unplayed == 0 for r in runs for t in r.tasks)

    ran = run_endstate("eval", "--model", "scripted/null", "--suite", str(TASKS), "--replay",
                       str(CASSETTES / "harbor-scripted-null"), "-j", "2", "--expect", "fail", "--out",
                       str(tmp_path / "null"))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    null = read_results(tmp_path / "null")
    assert null.vector == [(t, "fail") for t in TASK_IDS]
    assert {t.failing_grader for t in null.tasks} == {"verifier"}


@pytest.mark.parametrize(("seal", "outcome"), [(True, "pass"), (False, "fail")])
def test_a_fix_outside_the_workspace_passes_only_when_its_folder_is_sealed(tmp_path, seal, outcome):
    """The reference writes /etc/greeter/greeter.conf as the agent user; the grading container
    is the task image plus what was sealed. Without `[seal]` the fix never reaches it."""
    import shutil

    task = tmp_path / "suite" / "etc-greeter-config"
    shutil.copytree(TASKS / "etc-greeter-config", task)
    if not seal:
        manifest = (task / "task.toml").read_text()
        (task / "task.toml").write_text(manifest.replace('[seal]\npaths = ["/etc/greeter"]\n\n', ""))
        (task / "solution").mkdir(exist_ok=True)
    ran = run_endstate("eval", "--suite", str(tmp_path / "suite"), "--model", "scripted/reference",
                       "--out", str(tmp_path / "run"))
    (result,) = read_results(tmp_path / "run").tasks
    assert result.outcome == outcome, ran.stdout + ran.stderr
    diff = next((tmp_path / "run").rglob("etc-greeter-config*.diff")).read_text()
    assert ("A /etc/greeter/greeter.conf" in diff) == seal, diff
    if not seal:
        assert "greet.sh printed 'HELLO, WORLD!'" in result.reason, result.reason
