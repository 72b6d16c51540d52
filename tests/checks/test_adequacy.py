"""The task-folder side of `tasks adequacy`: the triage file and the other right fixes."""

from __future__ import annotations

from pathlib import Path

import pytest

from endstate.errors import ManifestError
from endstate.run._results import RunCard, RunResult, read_results, write_results
from endstate.task import load_suite, load_task
from endstate.task._triage import Measured, load_equivalents, load_triage, recorded_adequacy

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
    ("[measured]\nmutants = 4\nkiled = 4\n", "unknown field `kiled`"),
    ("[measured]\nmutants = 4\nkilled = 4\nequivalent = 1\n", "killed = 4 is not between 0 and mutants - equivalent (3)"),
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


def test_measured_figures_reach_the_run_card_and_survive_results_json(tmp_path):
    with_figures, without = small_task(tmp_path / "a"), small_task(tmp_path / "b")
    (with_figures / "adequacy.toml").write_text('[measured]\nmutants = 9\nkilled = 7\nequivalent = 2\n'
                                               '[[equivalent]]\nmutant = "m"\nreason = "r"\n')
    task = load_task(with_figures)
    assert load_triage(task).measured == Measured(9, 7, 2)
    assert Measured(9, 7, 2).line() == "7/7 mutants killed, 2 equivalent"
    assert Measured(5, 4).line() == "4/5 mutants killed, 1 survived"  # the viewer lists a task's survivors
    assert Measured(10, 7, 1).line() == "7/9 mutants killed, 2 survived, 1 equivalent"
    found = recorded_adequacy([task, load_task(without)])
    assert found == {"demo": Measured(9, 7, 2)}  # the task without a file is left off
    write_results(RunResult(_card(adequacy=found), []), tmp_path / "run")
    assert read_results(tmp_path / "run").card.adequacy == found
    write_results(RunResult(_card(), []), tmp_path / "bare")  # no task records one: no field at all
    assert b"adequacy" not in (tmp_path / "bare" / "results.json").read_bytes()


def _card(**fields) -> RunCard:
    return RunCard(endstate_version="0", model="scripted/reference", provider="scripted", temperature=0.0, seed=0,
                   retry_ceiling=0, tool_choice="auto", network_policy="none", sandbox_backend="docker", image="i",
                   image_id="", task_pack_hash="p", tasks=1, **fields)


def test_the_shipped_tasks_record_figures_that_add_up():
    for suite in (TASKS, TASKS.parent / "tasks-real"):
        for task in load_suite(suite)[0]:
            triage = load_triage(task)
            if triage.measured is not None:
                assert triage.measured.equivalent == len(triage.equivalent), task.id


def test_every_shipped_task_records_its_adequacy_with_no_survivor():
    """What `tasks adequacy` checks against what it counts: every mutant of every shipped task's
    reference is killed or recorded as equivalent (issue 38, the shipped suite is adequate)."""
    weak = {}
    for suite in (TASKS, TASKS.parent / "tasks-real"):
        for task in load_suite(suite)[0]:
            measured = load_triage(task).measured
            if measured is None or measured.killed + measured.equivalent != measured.mutants:
                weak[task.id] = measured
    assert weak == {}
