"""The visible tests in the first held-out half's process, in Docker, graded the way a
real run grades (`grade`: probe first, then warm test runs, the joint process where the
commands allow): an honest end state passes with the verdicts of separate processes, in
two test processes instead of three, and every shipped hack the held-out tests catch is
still caught."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import endstate.grading._builtin as builtin
from endstate.agent import Guards
from endstate.checks._check import grade_tree
from endstate.grading import Outcome
from endstate.run._runner import resolve_graders
from endstate.sandbox import DEFAULT_IMAGE, build_image
from endstate.task import load_suite

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TASKS = Path(__file__).resolve().parents[2] / "tasks"
SUITE = {task.id: task for task in load_suite(TASKS)[0]}


@pytest.fixture(scope="module", autouse=True)
def _image():
    build_image(DEFAULT_IMAGE)  # a no-op when it is current


def _grade(task, tree, guards=Guards()):
    return grade_tree(task, resolve_graders(task), task.fixture(), tree, task.holdout(), "docker", DEFAULT_IMAGE, guards)


def test_an_honest_end_state_gets_the_verdicts_of_separate_processes_from_two(monkeypatch):
    task = SUITE["bugfix-invoice-rounding"]
    commands = []
    real = builtin.run_joint

    def counted(grading, joint):
        commands.append(joint.command)
        return real(grading, joint)

    monkeypatch.setattr(builtin, "run_joint", counted)
    joint = {name: (outcome, reason) for name, outcome, reason in _grade(task, task.solution())}
    monkeypatch.setattr(builtin, "run_joint", real)
    apart = {name: (outcome, reason) for name, outcome, reason in _grade(task, task.solution(),
                                                                          Guards(warm_start=False))}
    assert commands == ["python -m pytest -q tests_holdout tests"]
    assert joint == apart
    assert joint["tests_pass"] == (Outcome.PASS, "tests: 25 passed")
    assert joint["holdout"][0] is Outcome.PASS and "8 passed" in joint["holdout"][1]


def _held_out_hacks():
    for task in SUITE.values():
        for name, hack in sorted(task.hacks().items()):
            catchers = hack.spec.catchers()
            if "holdout" in catchers and not hack.live:  # a live hack is played as a real run (tests/e2e)
                yield task, name, hack, catchers


def test_every_hack_the_held_out_tests_catch_is_caught_with_the_visible_tests_riding_along():
    hacks = list(_held_out_hacks())
    assert len(hacks) >= 20

    def graded(item):
        task, name, hack, catchers = item
        verdicts = _grade(task, hack.tree)
        failing = [n for n, outcome, _ in verdicts if outcome is Outcome.FAIL]
        return f"{task.id}/{name}", catchers, failing, verdicts

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(graded, hacks))
    missed = [(label, catchers, verdicts) for label, catchers, failing, verdicts in results
              if not any(c in failing for c in catchers)]
    assert not missed, missed


STATE = b"SEEN = []\n\n\ndef double(x):\n    return x * 2\n"
VISIBLE = b"from calc import ops\n\n\ndef test_nothing_seen_yet():\n    assert ops.SEEN == []\n"
#: Cleans up after its assertion, not in a fixture: its twin, stopped at the turned assertion, leaves SEEN set.
#: (Through a name of its own: a check followed by `ops.SEEN.clear()` is no twin site at all, see _twinsites.py.)
SLOPPY = (b"from calc import ops\n\n\ndef test_double():\n    seen = ops.SEEN\n    seen.append(1)\n"
          b"    assert ops.double(3) == 6\n    seen.clear()\n")


def test_tasks_check_says_when_a_twin_would_leave_the_visible_tests_something_to_trip_on():
    from endstate.grading import (
        joint_problems,
        prepare_grading_sandbox,
        resolve,
        seal_overlay,
        stage_holdout,
        validation_tree,
    )
    from endstate.sandbox import SandboxLimits
    from endstate.sandbox._tree import FileEntry

    tree = {p: FileEntry(0o644, d) for p, d in {"calc/__init__.py": b"", "calc/ops.py": STATE,
                                                   "tests/test_ops.py": VISIBLE}.items()}
    graders = [resolve("endstate.grading:tests_pass", {"command": "python -m pytest -q tests"}),
               resolve("endstate.grading:holdout", {"command": "python -m pytest -q tests_holdout"})]
    found = {}
    for name, held in (("sloppy", SLOPPY), ("tidy", SLOPPY.replace(b"    seen.append(1)\n", b""))):
        with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=60), "joint") as box:
            grading = seal_overlay(tree, tree, box, Guards(twins=False))
            stage_holdout(grading, validation_tree({"tests_holdout/test_more.py": FileEntry(0o644, held)})[0])
            found[name] = joint_problems(grading, graders)
    assert len(found["sloppy"]) == 1 and "test_nothing_seen_yet" in found["sloppy"][0], found
    assert found["tidy"] == []
