"""The task-folder side of `tasks adequacy`: the triage file and the other right fixes."""

from __future__ import annotations

from pathlib import Path

import pytest

from endstate.errors import ManifestError
from endstate.checks._adequacy import load_equivalents
from endstate.task import load_task

TASKS = Path(__file__).resolve().parents[2] / "tasks"


def small_task(root: Path) -> Path:
    folder = root / "demo"
    for path, text in {"fixture/pkg/a.py": "def f():\n    return 1\n", "solution/pkg/a.py": "def f():\n    return 2\n",
                       "prompt.md": "fix f\n", "task.toml": 'id = "demo"\ncategory = "bugfix"\n'
                       '[[graders]]\nname = "endstate.grading:no_new_skips"\n'}.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    return folder


def test_triage_and_other_right_fixes_leave_the_task_hash_alone(tmp_path):
    folder = small_task(tmp_path)
    before = load_task(folder).content_hash()
    (folder / "solutions/two/pkg").mkdir(parents=True)
    (folder / "solutions/two/pkg/a.py").write_text("def f():\n    return 1 + 1\n")
    (folder / "adequacy.toml").write_text('[[equivalent]]\nmutant = "pkg/a.py:2:11:+1"\nreason = "r"\n')
    task = load_task(folder)
    assert task.content_hash() == before  # no agent sees them: recordings stay valid
    assert task.alternatives()["two"]["pkg/a.py"].data == b"def f():\n    return 1 + 1\n"
    assert load_equivalents(task) == {"pkg/a.py:2:11:+1": "r"}


@pytest.mark.parametrize("text, says", [
    ('[[equivalent]]\nmutant = "m"\nreasn = "r"\n', "unknown field `reasn`"),
    ('[[equivalent]]\nmutant = "m"\nreason = " "\n', "equivalent[1] (m) has an empty `reason`"),
    ('[[equivalent]]\nmutant = "m"\nreason = "r"\n[[equivalent]]\nmutant = "m"\nreason = "s"\n', "a second time"),
    ("equivalent = [", "not valid TOML"),
])
def test_a_bad_triage_file_is_named_with_what_to_fix(tmp_path, text, says):
    folder = small_task(tmp_path)
    (folder / "adequacy.toml").write_text(text)
    with pytest.raises(ManifestError, match="adequacy.toml: ") as raised:
        load_equivalents(load_task(folder))
    assert says in str(raised.value)


def test_a_file_loose_in_solutions_is_refused(tmp_path):
    folder = small_task(tmp_path)
    (folder / "solutions").mkdir()
    (folder / "solutions/a.py").write_text("x = 1\n")
    with pytest.raises(ManifestError, match="a.py lie loose"):
        load_task(folder).alternatives()
