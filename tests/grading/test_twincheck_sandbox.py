"""`tasks check`'s twin validation in Docker with real pytest: each candidate twin of a held-out
test selected by node id runs exactly the cases its original runs, and fails on the solution."""

from __future__ import annotations

import pytest

from endstate.agent import Guards
from endstate.sandbox import DEFAULT_IMAGE, SandboxLimits, build_image
from endstate.sandbox._tree import FileEntry

pytestmark = [pytest.mark.docker, pytest.mark.slow]

OPS = b"def double(x):\n    return x * 2\n"
#: Cases named by a fixture's params, not by the values the test compares (as markupsafe's `escape`).
PARAMETRISED = (b"import pytest\n\nfrom calc.ops import double\n\n\n"
                b"@pytest.fixture(params=['fast', 'slow'])\ndef mode(request):\n    return request.param\n\n\n"
                b"def test_double(mode):\n    assert double(3) == 6\n")


def _check(held: bytes, command: str, timeout: float = 60):
    from endstate.grading import (
        prepare_grading_sandbox,
        seal_overlay,
        stage_holdout,
        twin_problems,
        validation_command,
        validation_tree,
    )

    tree = {"calc/__init__.py": FileEntry(0o644, b""), "calc/ops.py": FileEntry(0o644, OPS)}
    build_image(DEFAULT_IMAGE)  # a no-op when it is current
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=timeout), "twincheck") as box:
        grading = seal_overlay(tree, tree, box, Guards(twins=False))
        staged, names = validation_tree({"tests_holdout/test_more.py": FileEntry(0o644, held)})
        stage_holdout(grading, staged)
        return twin_problems(grading, validation_command(command, names), names)


def test_the_twins_of_one_parametrised_case_run_that_case_only():
    count, problems = _check(PARAMETRISED, "python -m pytest -q tests_holdout/test_more.py::test_double[slow]")
    assert (count, problems) == (1, [])


UNITTEST = (b"from unittest import TestCase\n\nfrom calc.ops import double\n\n\n"
            b"class DoubleTests(TestCase):\n    def test_three(self):\n        time.sleep(1)\n"
            b"        self.assertEqual(double(3), 6)\n\n"
            b"    def test_four(self):\n        time.sleep(1)\n        self.assertEqual(double(4), 8)\n")


def test_the_twins_of_unittest_methods_get_the_time_their_copies_take():
    # Each method has four candidates (more-itertools' TestCase classes: 428 tests, 2919 candidates),
    # so the validation run takes five times the held-out run, and fits the timeout only if scaled.
    command = ("python -m pytest -q tests_holdout/test_more.py::DoubleTests::test_three "
               "tests_holdout/test_more.py::DoubleTests::test_four")
    assert _check(b"import time\n" + UNITTEST, command, timeout=6) == (2, [])
