"""Nothing a user wrote is overwritten without --overwrite: a second Harbor import of a task refuses
before anything is built; the importers write to `imported/` unless told, never to the shipped
suite `tasks`; a task id is checked where the task is made."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from endstate.authoring import import_harbor
from endstate.errors import UserError

DATA = Path(__file__).resolve().parents[1] / "data" / "harbor"


def test_a_second_harbor_import_keeps_the_edited_task_and_says_how_to_replace_it(tmp_path):
    out = tmp_path / "out"
    (out / "sh-word-count").mkdir(parents=True)
    (out / "sh-word-count" / "prompt.md").write_text("my edited prompt\n")
    with pytest.raises(UserError) as caught:
        import_harbor([DATA / "sh-word-count"], out)
    assert str(caught.value) == (f"{out / 'sh-word-count'} already exists: an earlier import, maybe edited since; "
                                 "pass --overwrite to replace it, or another --out")
    assert (out / "sh-word-count" / "prompt.md").read_text() == "my edited prompt\n"


def test_the_importers_default_out_is_not_the_shipped_suite(tmp_path, monkeypatch, cli):
    shutil.copytree(DATA / "sh-word-count", tmp_path / "src" / "sh-word-count")
    (tmp_path / "imported" / "sh-word-count").mkdir(parents=True)  # where the default points: refused, unbuilt
    monkeypatch.chdir(tmp_path)
    result = cli.invoke("tasks", "import", "harbor", str(tmp_path / "src" / "sh-word-count"),
                        env={"DOCKER_HOST": "unix:///nonexistent.sock"})
    assert result.code == 2, result.output
    assert "endstate: error: imported/sh-word-count already exists" in result.output, result.output
    for command in (["tasks", "import", "harbor", "--help"], ["tasks", "import", "swebench", "--help"]):
        assert "[default: imported]" in cli.invoke(*command).output


@pytest.mark.parametrize("task_id", ["bug fix é", "bugfix-é", ".hidden", "a/b", "", "_leading-underscore"])
def test_tasks_new_refuses_an_id_that_cannot_travel_in_a_url(tmp_path, task_id, cli):
    result = cli.invoke("tasks", "new", task_id, "--suite", str(tmp_path / "suite"))
    assert result.code == 2, result.output
    assert result.output == (f"endstate: error: task id {task_id!r} must be ASCII letters, digits, '.', '_' or '-', "
                             "starting with a letter or digit, e.g. bugfix-slice-negative-step\n")
    assert not (tmp_path / "suite").exists() or not any((tmp_path / "suite").iterdir())
