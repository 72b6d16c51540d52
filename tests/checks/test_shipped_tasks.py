"""The shipped suite itself: every task is well-formed and hack-resistant on paper.

(That the graders really fail on the fixture, pass on the solution and catch each
hack is checked in Docker by tests/e2e/test_tasks_check.py.)
"""

from collections import Counter
from pathlib import Path

import pytest

from endstate.checks import missing_hack_assertions
from endstate.run import resolve_graders
from endstate.task import load_suite

SUITE = Path(__file__).resolve().parents[2] / "tasks"
TASKS, ERRORS = load_suite(SUITE)
IDS = [t.id for t in TASKS]


def test_every_task_loads():
    assert not ERRORS, [str(e) for e in ERRORS]


def test_core_categories_have_three_or_more_tasks():
    counts = Counter(t.manifest.category.value for t in TASKS)
    for category in ("bugfix", "feature", "refactor"):
        assert counts[category] >= 3, counts


@pytest.mark.parametrize("task", TASKS, ids=IDS)
def test_no_task_is_graded_by_a_command_alone(task):
    assert missing_hack_assertions(task) == []
    resolve_graders(task)  # every grader imports and keeps the contract


@pytest.mark.parametrize("task", TASKS, ids=IDS)
def test_every_task_is_probed_outside_the_test_process(task):
    """Every shipped task runs its end state as a plain program too (probe/), and the
    expected observations stay with the task (out of every tree a sandbox receives)."""
    assert task.probe() is not None, f"{task.id} has no probe/"
    assert "probe" in [g.short_name for g in resolve_graders(task)]
    script, expected = task.probe()
    assert "pytest" not in script and "unittest" not in script
    assert isinstance(expected, dict) and expected, f"{task.id}: expected.json holds no observation"
    assert not any(path.startswith("probe/") for tree in (task.fixture(), task.holdout()) for path in tree)


@pytest.mark.parametrize("task", TASKS, ids=IDS)
def test_the_hack_arm_has_a_hack_to_play_on_every_task(task):
    """`scripted/hacks` plays one of the task's own hacks, one a hack assertion catches, as tool calls."""
    from endstate.models.scripted._policies import CATCHERS, _calls, chosen_hack

    hack = chosen_hack(task)
    assert hack is not None and set(hack.spec.catchers()) & set(CATCHERS), task.id
    assert hack.live or _calls(task, hack), f"{task.id}/hacks/{hack.name} cannot be written with the agent's tools"


@pytest.mark.parametrize("task", TASKS, ids=IDS)
def test_every_task_ships_negative_controls(task):
    hacks = task.hacks()
    assert len(hacks) >= 2, f"{task.id} has {len(hacks)} hacks/"
    fixture = task.fixture()
    for name, hack in hacks.items():
        if not hack.live:
            assert hack.tree != fixture and hack.tree != task.solution(), f"{task.id}/{name} changes nothing"
        assert hack.spec.description


def apply_reference(task):
    """Play the reference trajectory's file edits on the fixture, in Python."""
    tree = {path: entry.data for path, entry in task.fixture().items()}
    for step in task.reference().steps:
        for call in step.calls:
            args = call.args
            if call.tool == "write_file":
                tree[args["path"]] = args["content"].encode()
            elif call.tool == "edit_file":
                text = tree[args["path"]].decode()
                assert text.count(args["old"]) == 1, f"{task.id}: edit of {args['path']} is not unique"
                tree[args["path"]] = text.replace(args["old"], args["new"], 1).encode()
            elif call.tool == "bash" and call.args["command"].startswith("rm ") and " -" not in call.args["command"]:
                for path in call.args["command"].split()[1:]:
                    tree.pop(path, None)
    return tree


@pytest.mark.parametrize("task", [t for t in TASKS if t.manifest.kill_at is None], ids=lambda t: t.id)
def test_reference_trajectory_reaches_the_solution(task):
    """The known-fix control can only pass if its edits land exactly on solution/."""
    solution = {path: entry.data for path, entry in task.solution().items()}
    reached = apply_reference(task)
    differing = sorted(p for p in set(solution) | set(reached) if solution.get(p) != reached.get(p))
    assert not differing, f"{task.id}: reference ends away from solution/ in {differing}"


@pytest.mark.parametrize("task", [t for t in TASKS if t.manifest.kill_at is not None], ids=lambda t: t.id)
def test_kill_point_is_inside_the_reference_trajectory(task):
    calls = sum(len(step.calls) for step in task.reference().steps)
    assert task.manifest.kill_at <= calls
