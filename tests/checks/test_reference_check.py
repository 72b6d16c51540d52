"""tasks check's reference row: the trajectory must exist and reach solution/."""

from __future__ import annotations

from pathlib import Path

import pytest

from endstate.checks._reference_check import check_reference, reads_only
from endstate.sandbox import DEFAULT_IMAGE
from endstate.task import load_suite, load_task

TASKS = Path(__file__).resolve().parents[2] / "tasks"


def make_task(root: Path, reference: str | None) -> Path:
    folder = root / "demo"
    (folder / "fixture/pkg").mkdir(parents=True)
    (folder / "fixture/pkg/a.py").write_text("def f():\n    return 1\n")
    (folder / "solution/pkg").mkdir(parents=True)
    (folder / "solution/pkg/a.py").write_text("def f():\n    return 2\n")
    (folder / "prompt.md").write_text("fix f\n")
    (folder / "task.toml").write_text('id = "demo"\ncategory = "bugfix"\n'
                                      '[[graders]]\nname = "endstate.grading:no_new_skips"\n')
    if reference is not None:
        (folder / "reference.toml").write_text(reference)
    return folder


EDIT = '[[steps]]\ncalls = [{ tool = "edit_file", args = { path = "pkg/a.py", old = "return 1", new = "return %s" } }]\n'


def test_a_missing_reference_is_a_check_error_not_a_provider_refusal(tmp_path):
    outcome, ok, note = check_reference(load_task(make_task(tmp_path, None)), "local", DEFAULT_IMAGE)
    assert (outcome, ok) == ("missing", False)
    assert "no reference.toml" in note


def test_the_reference_must_reach_the_solution(tmp_path):
    assert check_reference(load_task(make_task(tmp_path / "a", EDIT % 2)), "local", DEFAULT_IMAGE) == ("solution", True, "")
    outcome, ok, note = check_reference(load_task(make_task(tmp_path / "b", EDIT % 3)), "local", DEFAULT_IMAGE)
    assert (outcome, ok) == ("differs", False) and "pkg/a.py" in note and "in memory" in note
    # An edit whose `old` is not in the file is named.
    broken = EDIT.replace('old = "return 1"', 'old = "return 9"') % 2
    outcome, ok, note = check_reference(load_task(make_task(tmp_path / "c", broken)), "local", DEFAULT_IMAGE)
    assert not ok and "occurs 0 times" in note


def test_which_commands_can_be_played_in_memory():
    for command in ("python -m pytest -q tests", "ls pkg tests && grep -c x pkg/*.py", "cat a | head -3",
                    "find . -name '*.py'", "sed -n 1,5p a.py"):
        assert reads_only(command), command
    for command in ("python tools/migrate.py", "echo x > a.py", "sed -i s/a/b/ a.py", "rm a.py",
                    "find . -name '*.pyc' -delete", "chmod +x run.sh"):
        assert not reads_only(command), command


@pytest.mark.docker
def test_a_reference_whose_commands_write_is_played_for_real(tmp_path):
    writes = '[[steps]]\ncalls = [{ tool = "bash", args = { command = "sed -i s/1/2/ pkg/a.py" } }]\n'
    outcome, ok, note = check_reference(load_task(make_task(tmp_path, writes)), "docker", DEFAULT_IMAGE)
    assert (outcome, ok, note) == ("solution", True, "")


@pytest.mark.docker
def test_every_shipped_reference_reaches_its_solution():
    tasks, errors = load_suite(TASKS)
    assert not errors and tasks
    for task in tasks:  # the checkpoint tasks' migrations run for real; the rest play in memory
        assert check_reference(task, "docker", DEFAULT_IMAGE) == ("solution", True, ""), task.id
