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
