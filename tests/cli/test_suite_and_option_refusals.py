"""A --suite holding no task is refused in one line by every command that reads a suite, and
options that contradict each other are refused rather than one of them dropped.

`tasks check`, `tasks adequacy` and `export --format harbor` once answered an empty folder, or
a task folder given as the suite, with "0 of 0 task(s)" and exit 0: a newcomer's wrong path
passed as a green check.
"""

from __future__ import annotations

import pytest
from cli_runner import invoke_endstate

NO_ENGINE = {"DOCKER_HOST": "unix:///nonexistent.sock"}

COMMANDS = {
    "tasks check": ["tasks", "check"],
    "tasks adequacy": ["tasks", "adequacy"],
    "export harbor": ["export", "--format", "harbor", "--out", "OUT"],
    "eval": ["eval", "--model", "scripted/null", "--out", "OUT"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_empty_suite_is_refused(tmp_path, command):
    empty = tmp_path / "empty"
    empty.mkdir()
    args = [str(tmp_path / "out") if a == "OUT" else a for a in COMMANDS[command]]
    result = invoke_endstate(*args, "--suite", str(empty), env=NO_ENGINE)
    assert result.code == 2, result
    assert result.err == (f"endstate: error: no task in {empty}: a task is a folder holding task.toml "
                          f"(`endstate tasks new ID --suite {empty}` makes one)\n"), result
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_task_folder_given_as_the_suite_names_its_parent(tmp_path, command):
    task = tmp_path / "my-tasks" / "bugfix-x"
    task.mkdir(parents=True)
    (task / "task.toml").write_text('id = "bugfix-x"\n')
    args = [str(tmp_path / "out") if a == "OUT" else a for a in COMMANDS[command]]
    result = invoke_endstate(*args, "--suite", str(task), env=NO_ENGINE)
    assert result.code == 2, result
    assert result.err == (f"endstate: error: {task} is a task folder, not a suite of them: "
                          f"pass the folder it is in, --suite {tmp_path / 'my-tasks'}\n"), result


def test_resume_with_overwrite_is_refused_not_one_of_them_dropped(tmp_path):
    """Given both, eval resumed the run in --out and said nothing of --overwrite."""
    result = invoke_endstate("eval", "--model", "scripted/null", "--out", str(tmp_path / "out"), "--resume",
                             "--overwrite", env=NO_ENGINE)
    assert result.code == 2, result
    assert "--resume continues the run in --out and --overwrite replaces it: pass one of them" in result.err
    assert not (tmp_path / "out").exists()


def test_a_replay_folder_of_another_suite_is_one_line_not_one_per_task(tmp_path):
    """It printed the same "no cassette for task ..." once for every task of the suite."""
    import shutil
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    suite = tmp_path / "suite"
    for task_id in ("bugfix-lru-eviction", "bugfix-invoice-rounding"):
        shutil.copytree(root / "tasks" / task_id, suite / task_id)
    folder = tmp_path / "cassettes"
    folder.mkdir()
    (folder / "bugfix-clamp.cassette").write_bytes(b"")
    result = invoke_endstate("eval", "--suite", str(suite), "--replay", str(folder), "--out", str(tmp_path / "out"),
                             env=NO_ENGINE)
    assert result.code == 2, result
    assert result.err == (f"endstate: error: {folder} holds a cassette of none of the 2 task(s) of {suite} (e.g. "
                          f"{folder}/bugfix-invoice-rounding.cassette); it holds 1 of other tasks, e.g. "
                          "bugfix-clamp.cassette: pass the --replay folder recorded on this suite, or record one "
                          f"with `endstate record --suite {suite} --model <provider/model>`\n"), result
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("model, trajectory", [("scripted/wasteful", "wasteful"),
                                               ("scripted/hack.edit-tests", "hacks/edit-tests/trajectory")])
def test_a_scripted_arm_whose_trajectory_tasks_lack_is_refused_before_any_sandbox(tmp_path, model, trajectory):
    """Each such task started a sandbox only to end in a model error (HTTP 422) that said to
    check the model name."""
    import shutil
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    suite = tmp_path / "suite"
    for task_id in ("bugfix-lru-eviction", "cost-small-fix-step-budget"):
        shutil.copytree(root / "tasks" / task_id, suite / task_id)
    result = invoke_endstate("eval", "--suite", str(suite), "--model", model, "--out", str(tmp_path / "out"),
                             env=NO_ENGINE)
    assert result.code == 2, result
    if model == "scripted/wasteful":  # the cost task ships one
        said = ("which 1 of the 2 task(s) lack (bugfix-lru-eviction): pass --task for those that do "
                "(cost-small-fix-step-budget)")
    else:
        said = "which 2 of the 2 task(s) lack (bugfix-lru-eviction, cost-small-fix-step-budget)"
    assert result.err == f"endstate: error: {model} plays each task's {trajectory}.toml, {said}\n", result
    assert not (tmp_path / "out").exists()
