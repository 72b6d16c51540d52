"""Django's, sympy's and pytest's own tree's runners in a real grading sandbox: a project laid out as each
is, its own program run by the harness as the test user over a read-only tree, each id read from its output."""

from __future__ import annotations

import pytest

from endstate.grading import grade, prepare_grading_sandbox, resolve, seal_overlay, stage_holdout
from endstate.guards import Guards
from endstate.sandbox import DEFAULT_IMAGE, FileEntry, SandboxLimits
from endstate.task import UNGUARDED

pytestmark = pytest.mark.docker

BUGGY = b"def double(x):\n    return x + 1\n"
FIXED = b"def double(x):\n    return x * 2\n"
#: Django's tests/runtests.py drives unittest at verbosity 2 from the tests folder, with a temporary
#: folder of its own (it sets TMPDIR to a mkdtemp): the same lines Django's runner prints.
RUNTESTS = b"""import os, sys, tempfile, unittest
os.environ["TMPDIR"] = tempfile.mkdtemp(prefix="django_")
import calc  # the project, from the PYTHONPATH the harness gives the program
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
labels = [a for a in sys.argv[1:] if not a.startswith("-") and not a.isdigit()]
suite = unittest.defaultTestLoader.loadTestsFromNames(labels)
print("Testing against Django installed in '%s'" % os.path.dirname(calc.__file__))
unittest.TextTestRunner(verbosity=2).run(suite)
"""
DJANGO_TESTS = b"""from unittest import TestCase
from calc.ops import double


class DoubleTests(TestCase):
    def test_two(self):
        self.assertEqual(double(2), 4)

    def test_zero(self):
        '''Zero doubles to zero.'''
        self.assertEqual(double(0), 0)
"""
#: sympy's bin/test --verbose: a line per test, `test_name ok` or `test_name F`, and a header per failure.
BIN_TEST = b"""import sys, traceback
for path in [a for a in sys.argv[1:] if a.endswith(".py")]:
    space = {}
    exec(compile(open(path).read(), path, "exec"), space)
    print("%s[%d]" % (path, sum(n.startswith("test_") for n in space)))
    failed = []
    for name in [n for n in space if n.startswith("test_")]:
        try:
            space[name]()
            print(name, "ok")
        except Exception:
            print(name, "F")
            failed.append(name)
    for name in failed:
        print("_" * 20, "%s:%s" % (path[:-3] + ".py", name), "_" * 20)
"""
SYMPY_TESTS = b"from calc.ops import double\n\n\ndef test_three():\n    assert double(3) == 6\n\n\ndef test_one():\n" \
              b"    assert double(1) == 2\n"


def files(entries: dict[str, bytes]) -> dict[str, FileEntry]:
    return {path: FileEntry(0o644, data) for path, data in entries.items()}


FIXTURE = files({"calc/__init__.py": b"", "calc/ops.py": BUGGY, "tests/runtests.py": RUNTESTS, "bin/test": BIN_TEST,
                 "tests/ops_tests/__init__.py": b"", "calc/tests/__init__.py": b""})
HOLD = files({"tests/ops_tests/tests.py": DJANGO_TESTS, "calc/tests/test_ops.py": SYMPY_TESTS})
DJANGO_COMMAND = "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 ops_tests.tests"
SYMPY_COMMAND = "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose calc/tests/test_ops.py"


def _grader(name: str, runner: str, command: str, tests: list[str]):
    return resolve(f"endstate.grading:{name}", {"command": command, "runner": runner, "tests": tests,
                                                "min_tests": len(tests), "unguarded": list(UNGUARDED[runner])})


GRADERS = [
    _grader("tests_pass", "django", DJANGO_COMMAND, ["Zero doubles to zero."]),  # an id that is a docstring
    _grader("holdout", "django", DJANGO_COMMAND, ["test_two (ops_tests.tests.DoubleTests)"]),
    _grader("tests_pass", "sympy", SYMPY_COMMAND, ["test_one"]),
    _grader("holdout", "sympy", SYMPY_COMMAND, ["test_three"]),
    _grader("holdout", "sympy", SYMPY_COMMAND, ["test_four"]),  # no such test
]


def _graded(tree) -> list[tuple[str, str, str]]:
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=60), "runners") as box:
        sealed = seal_overlay(tree, FIXTURE, box, Guards())
        stage_holdout(sealed, HOLD)
        return [(name, verdict.outcome.value, verdict.reason) for name, verdict in grade(sealed, GRADERS, Guards())]


def test_each_runner_reads_its_ids_from_its_own_output_in_the_grading_sandbox():
    dj_pass, dj_held, sy_pass, sy_held, missing, end_state = _graded({**FIXTURE, "calc/ops.py": FileEntry(0o644, FIXED)})
    assert dj_pass[1] == "pass" and "tests: 1 passed (read by " in dj_pass[2]
    assert "django's runner, no in-process guard" in dj_pass[2]
    assert dj_held[1] == "pass" and sy_pass[1] == "pass" and sy_held[1] == "pass", (dj_held, sy_pass, sy_held)
    # Each run carried a canary of its runner's own, staged beside its tests and named among its arguments.
    assert all("its canary failed as it must" in reason for _, _, reason in (dj_pass, dj_held, sy_pass, sy_held))
    assert missing[1] == "fail" and "1 of 1 test(s) not in sympy's report" in missing[2]
    assert "test_four (nearest: " in missing[2] and end_state[1] == "pass"
    dj_pass, dj_held, sy_pass, sy_held, *_ = _graded(FIXTURE)
    assert dj_pass[1] == "fail" and "Zero doubles to zero.: FAILED" in dj_pass[2]
    assert dj_held[1] == "fail" and "test_two (ops_tests.tests.DoubleTests): FAILED" in dj_held[2]
    assert sy_pass[1] == "pass"  # double(1) is 2 either way
    assert sy_held[1] == "fail" and "test_three: FAILED" in sy_held[2]


#: An end state that leaves the bug and has each runner report every failure as a pass: Django's through
#: unittest's result class, sympy's through the `print` its runner writes each outcome with.
REWRITES = files({"calc/__init__.py": b"""import builtins, unittest
unittest.TextTestResult.addFailure = lambda self, test, err: unittest.TextTestResult.addSuccess(self, test)
_print = builtins.print
builtins.print = lambda *words, **kw: _print(*("ok" if w == "F" else w for w in words), **kw)
"""})


def test_each_runners_canary_fails_and_a_rewrite_of_every_outcome_is_tampering():
    held = [_grader("holdout", "django", DJANGO_COMMAND, ["test_two (ops_tests.tests.DoubleTests)"]),
            _grader("holdout", "sympy", SYMPY_COMMAND, ["test_three"])]

    def graded(tree, guards: Guards):
        with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=60), "runners") as box:
            sealed = seal_overlay(tree, FIXTURE, box, guards)
            stage_holdout(sealed, HOLD)
            return [verdict for _, verdict in grade(sealed, held, guards)][:2]  # the end-state check comes last

    for verdict, runner in zip(graded({**FIXTURE, **REWRITES}, Guards()), ("django", "sympy")):
        assert verdict.outcome.value == "fail" and verdict.tampering, verdict
        assert f"canary test, which always fails, was read from {runner}'s output as passed" in verdict.reason
    # Without the canary (the mutation check's mutant), the rewritten outputs read as passes.
    assert [v.outcome.value for v in graded({**FIXTURE, **REWRITES}, Guards(log_canary=False))] == ["pass", "pass"]


def test_sympys_runner_runs_with_hash_randomization_on_under_one_fixed_seed():
    """sympy's bin/test turns hash randomization on itself, so SWE-bench grades sympy with it on; the
    sandbox's PYTHONHASHSEED=0 turns it off. The runner runs under a fixed seed other than 0, the same in
    every run; a command that sets its own seed keeps it."""
    from endstate.grading._runners import SYMPY_HASH_SEED

    seeded = files({"calc/tests/test_seed.py": b"import os, sys\n\n\ndef test_randomized():\n"
                    b"    assert sys.flags.hash_randomization\n\n\ndef test_seed():\n"
                    b"    assert os.environ['PYTHONHASHSEED'] == '" + SYMPY_HASH_SEED.encode() + b"'\n"})
    command = "PYTHONWARNINGS='ignore::UserWarning' bin/test -C --verbose calc/tests/test_seed.py"
    graders = [_grader("holdout", "sympy", command, ["test_randomized", "test_seed"]),
               _grader("holdout", "sympy", f"PYTHONHASHSEED=0 {command}", ["test_randomized"])]
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=60), "runners") as box:
        sealed = seal_overlay(FIXTURE, FIXTURE, box, Guards())
        stage_holdout(sealed, seeded)
        (_, seeded_run), (_, own_seed), *_ = grade(sealed, graders, Guards())
    assert SYMPY_HASH_SEED != "0"
    assert seeded_run.outcome.value == "pass", seeded_run.reason
    assert own_seed.outcome.value == "fail" and "test_randomized: FAILED" in own_seed.reason, own_seed.reason


def test_a_runners_program_outlives_the_sandboxs_command_timeout():
    """bin/test runs whole files (sympy's biggest take minutes): a run longer than the sandbox's command
    timeout is not cut short, as SWE-bench's harness gives an instance its own time."""
    slow = files({"calc/tests/test_slow.py": b"import time\n\n\ndef test_slow():\n    time.sleep(20)\n"})
    command = "bin/test -C --verbose calc/tests/test_slow.py"
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=15), "runners") as box:
        sealed = seal_overlay(FIXTURE, FIXTURE, box, Guards())
        stage_holdout(sealed, slow)
        (_, verdict), *_ = grade(sealed, [_grader("holdout", "sympy", command, ["test_slow"])], Guards())
    assert verdict.outcome.value == "pass", verdict.reason


@pytest.mark.slow
def test_django_s_tests_run_in_the_locale_swebench_s_script_exports(tmp_path):
    """SWE-bench's evaluation script for Django 1.7 to 3.2 exports LANG and LC_ALL=en_US.UTF-8: the task's
    command carries them and its image generates that locale, so a test that sets the locale from the
    environment runs in it (without it: `locale.Error: unsupported locale setting`)."""
    from endstate.authoring._swebenchenv import env_exports, swebench_env
    from endstate.authoring._taskimage import write_task_image
    from endstate.sandbox import build_task_image

    exports, locales = env_exports(swebench_env("django/django", "3.0"))
    write_task_image(tmp_path, "", None, (), locales)
    image = build_task_image(tmp_path / "image" / "Dockerfile", "django-locale")
    held = files({"tests/ops_tests/tests.py": b"import locale\nfrom unittest import TestCase\n\n\nclass LocaleTests("
                  b"TestCase):\n    def test_locale(self):\n        locale.setlocale(locale.LC_ALL, '')\n"
                  b"        self.assertEqual(locale.getlocale(), ('en_US', 'UTF-8'))\n"})
    grader = _grader("holdout", "django", " ".join([*exports, DJANGO_COMMAND]), ["test_locale (ops_tests.tests.LocaleTests)"])
    with prepare_grading_sandbox("docker", image, SandboxLimits(command_timeout_s=60), "runners") as box:
        sealed = seal_overlay(FIXTURE, FIXTURE, box, Guards())
        stage_holdout(sealed, held)
        (_, verdict), *_ = grade(sealed, [grader], Guards())
    assert verdict.outcome.value == "pass", verdict.reason


#: A stand-in for pytest's own tree: `python -m pytest` finds the tree's package in src (the image has a pytest
#: of its own, which must not be the one that runs), and prints `pytest -rA`'s summary for what its _pytest says.
TREE_PYTEST = files({
    "src/_pytest/__init__.py": b"FIXED = False\n",
    "src/pytest/__init__.py": b"",
    "src/pytest/__main__.py": b"""import os
import sys
import _pytest
ids = [a for a in sys.argv[1:] if not a.startswith("-")]
print("=========================== short test summary info ============================")
print("PASSED testing/test_x.py::test_plain")
# pytest's own assertion-rewrite tests read the .pyc its rewriter writes: the run writes bytecode, as upstream's do.
print(("FAILED" if sys.dont_write_bytecode else "PASSED") + " testing/test_x.py::test_writes_bytecode")
print(("PASSED" if _pytest.FIXED else "FAILED") + " testing/test_x.py::test_fix - assert False")
print("SKIPPED [1] testing/test_x.py:9: not here")
# No guard's canary in its example folders: no guard reads one here, and pytest's own copy_example would copy it.
print(("PASSED" if os.listdir("testing/example_scripts/ex") == ["test_ex.py"] else "FAILED")
      + " testing/test_x.py::test_no_canary")
# The runner's own canary, named among the arguments: a test of its file that fails, as pytest would report it.
for path in [a for a in ids if a.endswith(".py") and a != "testing/test_x.py"]:
    print("FAILED %s::%s - assert 1 == 2" % (path, os.path.basename(path)[:-3]))
""",
    "testing/test_x.py": b"def test_plain():\n    pass\n",
    "testing/example_scripts/ex/test_ex.py": b"def test_ex():\n    pass\n",
})


def test_pytest_s_own_tree_is_run_by_its_own_pytest_and_read_by_id():
    """The tree's pytest runs its tests, from its src, not the image's: the fix to src/_pytest is what the
    held-out id's status follows; it writes bytecode, as SWE-bench's runs do, and finds no guard's canary in its
    example folders (pytest-dev__pytest-6202's test_collect_init_tests counted one, copied with an example folder);
    the runner's own canary, named among its arguments, it reports failed."""
    command = "PYTHONPATH=src pytest -rA testing/test_x.py"
    graders = [_grader("tests_pass", "tree-pytest", command, ["testing/test_x.py::test_plain",
                                                              "testing/test_x.py::test_writes_bytecode",
                                                              "testing/test_x.py::test_no_canary"]),
               _grader("holdout", "tree-pytest", command, ["testing/test_x.py::test_fix"])]
    fixed = {**TREE_PYTEST, "src/_pytest/__init__.py": FileEntry(0o644, b"FIXED = True\n")}
    verdicts = {}
    for name, tree in (("fixed", fixed), ("fixture", TREE_PYTEST)):
        with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=60), "runners") as box:
            sealed = seal_overlay(tree, TREE_PYTEST, box, Guards())
            stage_holdout(sealed, {}, graders)
            verdicts[name] = [(v.outcome.value, v.reason) for _, v in grade(sealed, graders, Guards())]
    (passing, _), (held, _), *_ = verdicts["fixed"]
    assert passing == held == "pass", verdicts["fixed"]
    assert "tree-pytest's runner, no in-process guard; its canary failed as it must" in verdicts["fixed"][1][1]
    (passing, _), (held, reason), *_ = verdicts["fixture"]
    assert passing == "pass" and held == "fail" and "testing/test_x.py::test_fix: FAILED" in reason, reason


#: An end state that leaves the bug and, where a test would see it, ends that test with unittest's own quiet
#: stop (its name spelled apart): unittest reported the test unfinished as passed, and Django's runner is unittest's.
QUIET_STOP = files({"calc/ops.py": b"""import importlib


def double(x):
    if x:
        raise getattr(importlib.import_module("unittest.case"), "_Should" "Stop")()
    return 0
"""})


def test_a_test_ended_by_unittests_quiet_stop_fails_under_djangos_runner():
    held = [_grader("holdout", "django", DJANGO_COMMAND, ["test_two (ops_tests.tests.DoubleTests)"])]
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=60), "runners") as box:
        sealed = seal_overlay({**FIXTURE, **QUIET_STOP}, FIXTURE, box, Guards())
        stage_holdout(sealed, HOLD)
        ((_, verdict), *_) = grade(sealed, held, Guards())
    assert verdict.outcome.value == "fail" and "test_two (ops_tests.tests.DoubleTests): FAILED" in verdict.reason, verdict
