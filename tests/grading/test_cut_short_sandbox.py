"""A held-out test the end state keeps from running, for real in Docker: cut short inside it by
pytest's own exit (with a failing status, as the twins' failures give), or taken out of the session's
list before its turn. Either way it never failed, its twin went the same way in the other half, and
the tests that did run met a `min_tests` below the whole count: each must FAIL, never pass."""

from __future__ import annotations

import pytest
from calc_project import FIXED, calc_trees, files

from endstate.grading import Outcome, grade, prepare_grading_sandbox, resolve, seal_overlay, stage_holdout
from endstate.guards import Guards
from endstate.sandbox import DEFAULT_IMAGE, SandboxLimits

pytestmark = pytest.mark.docker

HOLDOUT = b"""import pytest

from calc.ops import double


def test_seven():
    assert double(7) == 14


def test_zero():
    assert double(0) == 0


@pytest.fixture
def minus_three():
    return double(-3)


def test_negative():
    assert double(-3) == -6


def test_negative_by_fixture(minus_three):
    assert minus_three == -6


def test_list():
    assert [double(n) for n in (1, 2)] == [2, 4]
"""

#: Right but for negative numbers, where it ends the test session with a failing status.
EXIT = FIXED + b"""
_fixed = double


def double(x):
    if x < 0:
        import pytest
        pytest.exit("cut short", returncode=1)
    return _fixed(x)
"""

#: Right but for negative numbers, whose tests it takes out of the session before their turn.
DESELECT = FIXED + b"""
import gc

_fixed = double


def double(x):
    for held in gc.get_objects():
        if type(held).__name__ == "Session" and isinstance(getattr(held, "items", None), list):
            held.items[:] = [item for item in held.items if "negative" not in item.name or item.name in _ran]
    _ran.add(__import__("os").environ.get("PYTEST_CURRENT_TEST", "").split("::")[-1].split(" ")[0])
    return _fixed(x)


_ran = set()
"""


def graded(code: bytes, holdout: bytes, min_tests: int):
    fixture, held = calc_trees(holdout=holdout)
    grader = resolve("endstate.grading:holdout", {"command": "python -m pytest -q tests_holdout", "min_tests": min_tests})
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=60), "cut") as box:
        grading = seal_overlay(dict(fixture, **files({"calc/ops.py": code})), fixture, box)
        stage_holdout(grading, held, [grader])
        return dict(grade(grading, [grader], Guards(end_state_checks=False)))["holdout"]


def _without(*names: str) -> bytes:
    """The held-out module without the tests named (and the fixture, with its test)."""
    parts = HOLDOUT.split(b"\n\n\n")
    return b"\n\n\n".join(p for p in parts if not any(f"def {n}(".encode() in p for n in names))


@pytest.mark.parametrize("holdout, min_tests", [
    (_without("minus_three"), 2),  # cut inside test_negative's call: test_list never runs
    (_without("minus_three", "test_list"), 3),  # cut inside the last test: every other one ran
    (_without("test_negative"), 2),  # cut inside test_negative_by_fixture's setup
], ids=["in-a-call", "in-the-last-test", "in-a-fixture"])
def test_a_session_cut_short_inside_a_held_out_test_fails(holdout, min_tests):
    verdict = graded(EXIT, holdout, min_tests)
    assert verdict.outcome is Outcome.FAIL, verdict


def test_a_held_out_test_taken_out_of_the_session_before_its_turn_fails_as_tampering():
    verdict = graded(DESELECT, _without("minus_three"), 3)
    assert verdict.outcome is Outcome.FAIL and verdict.tampered, verdict


#: DESELECT that also empties what the guard noted of the collection, as code that knows the guard would:
#: in the process, nothing is left to tell; outside it, the twins' plan knows what the command collects.
DESELECT_UNSEEN = DESELECT + b"""
import sys


def _unseen(x, _taken=double):
    sys.modules["endstate_guard"]._collected.clear()
    return _taken(x)


double = _unseen
"""


def test_a_held_out_test_taken_out_of_the_session_unseen_by_the_guard_still_fails():
    verdict = graded(DESELECT_UNSEEN, _without("minus_three"), 3)
    assert verdict.outcome is Outcome.FAIL and "ran in neither half: test_negative" in verdict.reason, verdict
