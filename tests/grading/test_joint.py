"""Which tasks' visible tests can share the first held-out half's process, and how one
run's report is split between the two graders (no engine needed; the runs themselves
are in test_joint_sandbox.py)."""

from __future__ import annotations

import pytest

from endstate.grading import Grading, TestRun, resolve
from endstate.grading._joint import plan_joint, split_run
from endstate.guards import Guards
from endstate.sandbox import FileEntry, SealedSandbox


def _state(paths=("pkg/mod.py", "tests/test_a.py"), staged=("tests_holdout/test_b.py",), plan=object(),
            guards=Guards()):
    """The grading state of an end state holding `paths`, with `staged` held out and a twin plan (`plan`)."""
    grading = Grading(SealedSandbox(None, {p: FileEntry(0o644, b"") for p in paths}, {}), None, guards)
    grading.staged, grading.twin_plan = set(staged), plan
    return grading


def _graders(visible="python -m pytest -q tests", held="python -m pytest -q tests_holdout"):
    return [resolve("endstate.grading:tests_pass", {"command": visible}),
            resolve("endstate.grading:files_unchanged", {}),
            resolve("endstate.grading:holdout", {"command": held})]


def test_two_pytest_commands_that_differ_only_in_their_paths_share_one_process():
    joint = plan_joint(_state(), _graders())
    assert joint is not None
    assert joint.command == "python -m pytest -q tests_holdout tests"  # the held-out tests first
    assert (joint.visible, joint.held, joint.held_paths) == ("python -m pytest -q tests", "python -m pytest -q tests_holdout",
                                                             ("tests_holdout",))
    src = plan_joint(_state(paths=("src/pkg/mod.py", "tests/test_a.py")),
                     _graders("PYTHONPATH=src python -m pytest -q -p no:randomly tests",
                              "PYTHONPATH=src python -m pytest -q -p no:randomly tests_holdout/test_b.py::test_one"))
    assert src is None  # -p takes a value: nothing says where its options end
    files = plan_joint(_state(), _graders("pytest -q --tb=short tests/test_a.py", "pytest -q --tb=short tests_holdout"))
    assert files is not None and files.command == "python -m pytest -q --tb=short tests_holdout tests/test_a.py"


@pytest.mark.parametrize("visible, held", [
    ("python -m pytest -q tests", "python -m pytest -q tests/test_a.py::test_new"),  # one inside the other
    ("python -m pytest -q", "python -m pytest -q tests_holdout"),  # the visible run collects everything
    ("python -m pytest -q -k fast tests", "python -m pytest -q -k fast tests_holdout"),  # an option's value
    ("python -m pytest -q -x tests", "python -m pytest -q -x tests_holdout"),  # a twin's failure would stop it
    ("python -m pytest -q tests", "python -m pytest tests_holdout"),  # other options
    ("FOO=1 python -m pytest -q tests", "python -m pytest -q tests_holdout"),  # other environments
    ("python -m unittest discover -s tests", "python -m unittest discover -s tests_holdout"),
    ("python -m pytest -q tests", "python -m pytest -q nowhere"),  # a path the tree does not have
])
def test_commands_that_could_mix_their_tests_keep_a_process_each(visible, held):
    assert plan_joint(_state(), _graders(visible, held)) is None


def test_without_halves_or_guard_or_either_grader_there_is_nothing_to_share():
    assert plan_joint(_state(plan=None), _graders()) is None
    unguarded = _state(guards=Guards(tamper_guard=False))  # the guard is what tells each case's file
    assert plan_joint(unguarded, _graders()) is None
    assert plan_joint(_state(), _graders()[:2]) is None
    assert plan_joint(_state(), _graders() + [resolve("endstate.grading:holdout", {"command": "pytest other"})]) is None


def _run(cases, files, exit_code=1, canary="failed"):
    return TestRun(exit_code, False, "tail naming twin test_b", report_found=True, tests=len(cases),
                   failures=sum(c[2] == "failure" for c in cases), errors=sum(c[2] == "error" for c in cases),
                   canary=canary, findings=[], cases=cases, files=files)


def test_each_case_goes_to_the_grader_whose_path_holds_its_file():
    joint = plan_joint(_state(), _graders())
    cases = [("tests.test_a", "test_one", "passed"), ("tests_holdout.test_b", "test_two", "failure"),
             ("tests_holdout.test_b.TestC", "test_three", "passed"), ("odd", "unplaced", "passed")]
    files = {"tests.test_a::test_one": "tests/test_a.py", "tests_holdout.test_b::test_two": "tests_holdout/test_b.py",
             "tests_holdout.test_b.TestC::test_three": "tests_holdout/test_b.py"}
    visible, held = split_run(_run(cases, files), joint)
    # A case the guard did not place is the visible tests': a twin placed nowhere is missing from its half.
    assert visible.cases == [cases[0], cases[3]] and (visible.tests, visible.failures) == (2, 0)
    assert held.cases == cases[1:3] and (held.tests, held.failures) == (2, 1)
    # Each share exits as a process of its own cases would have: the canary failed in both.
    assert visible.exit_code == held.exit_code == 1
    assert visible.output_tail == held.output_tail == ""  # the tail names twins, drawn per run
    without_canary = split_run(_run(cases, files, canary="missing"), joint)
    assert [share.exit_code for share in without_canary] == [0, 1]
    crashed = split_run(_run(cases, files, exit_code=2, canary="missing"), joint)
    assert [share.exit_code for share in crashed] == [2, 2]  # an exit no run of these cases explains stays as it was
