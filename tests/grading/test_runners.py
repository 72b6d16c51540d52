"""Django's, sympy's and pytest's own tree's runners: their output read as SWE-bench's parsers read it, by id."""

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from swebench.harness.log_parsers import python as parsers  # the `test` extra: these checks run in CI

from endstate.errors import ManifestError
from endstate.grading._runners import (
    LOG_RUNNERS,
    find_tests,
    log_runner,
    read_django,
    read_log,
    read_pytest,
    read_sympy,
    same_test,
)
from endstate.grading._testrun import TestCommandError
from endstate.task import GraderSpec, unguarded_of
from endstate.task._runners import check_runners

#: Real output: Django 4.1's runtests.py (SWE-bench's flags) on admin_views.test_templatetags with
#: django__django-16527's test patch, without and with its fix (and a PostgreSQL module that skips);
#: sympy's bin/test -C --verbose at sympy__sympy-23950's base with its test patch, without and with
#: its fix (and test_powerset.py, whose XFAIL test passes). Python 3.11; the checkout paths
#: rewritten to /testbed.
LOGS = Path(__file__).parent.parent / "data" / "runners"
SUBMIT = ("test_submit_row_save_as_new_add_permission_required (admin_views.test_templatetags.AdminTemplateTagsTest."
          "test_submit_row_save_as_new_add_permission_required)")


def _log(name: str) -> str:
    return (LOGS / f"{name}.log").read_text(encoding="utf-8")


def test_django_output_is_read_by_id():
    failing, passing = read_django(_log("django-fail")), read_django(_log("django-pass"))
    assert failing[SUBMIT] == "FAILED" and passing[SUBMIT] == "PASSED"
    assert failing["submit_row template tag should pass whole context."] == "PASSED"  # a docstring names it
    assert failing["test_submit_row_save_as_new_add_permission_required"] == "FAILED"  # the `FAIL:` line's word
    skipped = [t for t, s in passing.items() if s == "SKIPPED"]
    assert len(skipped) == 6 and all("backends.postgresql" in t for t in skipped)
    assert sum(s == "PASSED" for s in passing.values()) == 7


def test_sympy_output_is_read_by_id():
    failing, passing = read_sympy(_log("sympy-fail")), read_sympy(_log("sympy-pass"))
    assert failing["test_as_set"] == "ERROR"
    assert failing["sympy/sets/tests/test_contains.py:test_as_set"] == "FAILED"  # its report's header
    assert "test_type_error" not in failing  # the file's last line ends in `[FAIL]`: SWE-bench reads no status
    assert passing["test_as_set"] == "PASSED" and "test_type_error" not in passing  # `ok  [OK]`: the same
    assert "test_failing_powerset__contains__" not in passing  # `X` (passed an XFAIL): no status either
    assert sum(s == "PASSED" for s in passing.values()) == 13  # 15 passed, less each file's last


@pytest.mark.parametrize("log", ["django-fail", "django-pass", "sympy-fail", "sympy-pass"])
def test_the_readers_agree_with_swebench_on_real_output(log):
    runner = LOG_RUNNERS[log.split("-")[0]]
    theirs = getattr(parsers, runner.parser)(_log(log), None)
    assert runner.reader(_log(log)) == theirs
    assert read_log(runner, _log(log))[0] == theirs


def test_the_readers_agree_with_swebench_on_made_up_edges():
    django = ("test_a (m.T) ... Testing against Django installed in '/x' with up to 2 processes\nSystem check "
              "identified no issues (0 silenced).\nok\ntest_b (m.T) ... \nok\ntest_c (m.T) ... ERROR\n"
              "ERROR: test_c (m.T)\ntest_d (m.T) ...  OK\n--version is equivalent to version\n"
              "test_e (m.T) ... Internal Server Error: /x/\nok\n")
    sympy = ("sympy/a/tests/test_b.py[3]\ntest_x ok\ntest_y F\n  test_z E\n"
             "______ sympy/a/tests/test_b.py:test_y ______\n")
    tree_pytest = ("a.py::t PASSED [ 50%]\nPASSED [100%]\nFAILED a.py::t - AssertionError: x - y\nSKIPPED [2] a.py:3: why\n"
                   "SKIPPED a.py::s\nXFAIL a.py::u - reason\nERROR a.py::v - RuntimeError\nFAILED\nPASSEDa.py::w\n")
    assert read_django(django) == parsers.parse_log_django(django, None)
    assert read_sympy(sympy) == parsers.parse_log_sympy(sympy, None)
    assert read_pytest(tree_pytest) == parsers.parse_log_pytest(tree_pytest, None)
    assert read_pytest(tree_pytest)["[100%]"] == "PASSED"  # a wrapped progress line: pytest-dev__pytest-5262's list


#: Lines each reader's patterns treat specially, mixed at random below: an interrupted Django test in
#: each of its three shapes (and parts of them), sympy's failure headers and their parts.
DJANGO_LINES = ["test_a (m.C) ... Testing against Django installed in '/x' with up to 2 processes", "Found 3 test(s).",
                "System check identified no issues (0 silenced).", "ok", "test_b (m.C) ... Internal Server Error: /a/",
                "test_c (m.C) ... System check identified no issues (0 silenced)", "...", "test_d (m.C)",
                "Internal Server Error: /x/", "test_e (m.C) ... ok", "/", "okay", " silenced).", "x ... Internal Server "
                "Error: //", "Testing against Django installed in ' silenced).", "FAIL: test_f (m.C)", "test_g (m.C) ... ERROR"]
SYMPY_PARTS = ["_", "__", " ", "a", ".py:", ".py", ":", "x.py:test_y", "\n", "\r", "test_x", " ok", " F", " E"]


def test_the_readers_agree_with_swebench_on_random_mixtures_of_what_their_patterns_match():
    rng = random.Random(7)
    for _ in range(20000):
        django = "\n".join(rng.choice(DJANGO_LINES) for _ in range(rng.randint(0, 8))) + rng.choice(["", "\n"])
        assert read_django(django) == parsers.parse_log_django(django, None), django
        sympy = "".join(rng.choice(SYMPY_PARTS) for _ in range(rng.randint(0, 14)))
        assert read_sympy(sympy) == parsers.parse_log_sympy(sympy, None), sympy


#: Outputs a test of the end state can print, on which SWE-bench's patterns are quadratic: blanks along a
#: line (sympy's header, from each blank), an interrupted Django test that never ends (read on to the
#: end of the output from each), a server error's start again and again along a line.
HOSTILE = {"sympy": "'a ' * 500_000 + '\\n'", "django": "'x ... Testing against Django installed in \\n' * 25_000",
           "django-line": "'x ... Internal Server Error: /' * 35_000 + 'a\\nok\\n'"}


@pytest.mark.parametrize("shape", sorted(HOSTILE))
def test_an_output_swebenchs_parser_would_take_hours_over_is_read_in_one_pass(shape):
    """endstate's readers read it in well under a second (the bound is a hundred times that); SWE-bench's
    parser (minutes on the Django ones, most of an hour on the sympy one) is not given it, and the reader
    says so."""
    script = ("from endstate.grading._runners import LOG_RUNNERS, read_log\n"
              f"status, reader = read_log(LOG_RUNNERS[{shape.split('-')[0]!r}], {HOSTILE[shape]})\n"
              "print(reader)\n")
    done = subprocess.run([sys.executable, "-c", script], timeout=120, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("endstate, not swebench ") and "quadratic" in done.stdout
    for log in ("django-pass", "sympy-pass"):  # a real output is SWE-bench's parser's to read
        assert read_log(LOG_RUNNERS[log.split("-")[0]], _log(log))[1].startswith("swebench ")


#: A suite with each outcome pytest's short summary names, and a case whose id holds a space.
PYTEST_SUITE = """import pytest


def test_passes():
    pass


def test_fails():
    assert 1 == 2


@pytest.mark.skip(reason="not here")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known")
def test_expected_failure():
    assert 0


@pytest.fixture
def broken():
    raise RuntimeError("in setup")


def test_errors(broken):
    pass


@pytest.mark.parametrize("text", ["a b", "c"])
def test_cases(text):
    assert text
"""


def _pytest_output(folder: Path) -> str:
    """What a real pytest prints for PYTEST_SUITE under SWE-bench's `pytest -rA`."""
    (folder / "test_suite.py").write_text(PYTEST_SUITE, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "test_suite.py"],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=120)
    return done.stdout


def test_pytest_s_summary_is_read_by_id_as_swebench_reads_it(tmp_path):
    """`pytest -rA`'s short summary, from a real pytest: each line's second word is the id (a case whose id
    holds a space is cut there, as SWE-bench's datasets list it), and a skip's `[1]` count is no test."""
    log = _pytest_output(tmp_path)
    status = read_pytest(log)
    assert status == parsers.parse_log_pytest(log, None)
    assert read_log(LOG_RUNNERS["tree-pytest"], log)[0] == status
    assert status == {"test_suite.py::test_passes": "PASSED", "test_suite.py::test_fails": "FAILED",
                      "test_suite.py::test_expected_failure": "XFAIL", "test_suite.py::test_errors": "ERROR",
                      "test_suite.py::test_cases[a": "PASSED", "test_suite.py::test_cases[c]": "PASSED"}


def test_an_id_is_found_under_either_pythons_naming():
    assert same_test("test_x (m.C.test_x)") == "test_x (m.C)" == same_test("test_x (m.C)")
    assert same_test("A docstring (m.C.test_x)") == "A docstring (m.C.test_x)"
    status = {"test_x (m.C.test_x)": "PASSED", "test_y (m.C.test_y)": "FAILED"}
    passed, wrong, missing = find_tests(["test_x (m.C)", "test_y (m.C)", "test_w (m.C)"], status)
    assert passed == ["test_x (m.C)"] and wrong == ["test_y (m.C): FAILED"]
    assert len(missing) == 1 and missing[0].startswith("test_w (m.C) (nearest: ") and "test_x (m.C)" in missing[0]


def test_a_runners_command_is_its_program_and_nothing_else():
    django, sympy = log_runner("django"), log_runner("sympy")
    assert django.argv("./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 a.b") == (
        ["tests/runtests.py", "--verbosity", "2", "--settings=test_sqlite", "--parallel", "1", "a.b"], [])
    assert sympy.argv("PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose x.py") == (
        ["bin/test", "-C", "--verbose", "x.py"], ["PYTHONWARNINGS=ignore::UserWarning,ignore::SyntaxWarning"])
    for bad in ("python -m pytest tests", "./tests/runtests.py a && rm -rf /", "bin/test"):
        with pytest.raises(TestCommandError, match="django runner"):
            django.argv(bad)
    with pytest.raises(TestCommandError, match="name pytest, django, sympy, tree-pytest"):
        log_runner("nose")


def test_the_tree_s_pytest_runs_as_a_module_of_the_tree():
    """`pytest ARGS` (SWE-bench's command), or `python -m pytest ARGS`, is `python -m pytest ARGS` from the
    tree's import folders: never a file named pytest, nor another program."""
    runner = log_runner("tree-pytest")
    assert runner.argv("PYTHONPATH=src pytest -rA testing/test_x.py") == (
        ["-m", "pytest", "-rA", "testing/test_x.py"], ["PYTHONPATH=src"])
    assert runner.argv("python3 -m pytest -rA a.py") == (["-m", "pytest", "-rA", "a.py"], [])
    for bad in ("python3 pytest a.py", "./pytest a.py", "py.test a.py", "python3 -m unittest a", "pytest a | tee x"):
        with pytest.raises(TestCommandError, match="tree-pytest runner"):
            runner.argv(bad)


def test_a_task_states_the_guards_its_runner_goes_without(tmp_path):
    def grader(**args):
        return GraderSpec("endstate.grading:holdout", {"command": "bin/test x.py", **args})

    check_runners([grader(runner="sympy", unguarded=["half_isolation", "tamper_guard", "twins", "value_twins"],
                          tests=["test_x"])], tmp_path)
    check_runners([grader()], tmp_path)  # pytest's: every guard
    check_runners([grader(runner="tree-pytest", unguarded=["half_isolation", "tamper_guard", "twins", "value_twins"],
                          tests=["a.py::t"])], tmp_path)
    with pytest.raises(ManifestError, match=r"tree-pytest runner goes without"):
        check_runners([grader(runner="tree-pytest", unguarded=["twins"], tests=["a.py::t"])], tmp_path)
    with pytest.raises(ManifestError, match=r"graders\[0\]\.args\.unguarded.*sympy runner goes without"):
        check_runners([grader(runner="sympy", tests=["test_x"])], tmp_path)
    with pytest.raises(ManifestError, match=r"graders\[0\]\.args\.runner.*name one of pytest, django, sympy"):
        check_runners([grader(runner="nose")], tmp_path)
    with pytest.raises(ManifestError, match=r"graders\[0\]\.args\.tests"):
        check_runners([grader(tests=["a.py::t"])], tmp_path)


def test_the_card_names_what_a_tasks_runner_goes_without():
    django = GraderSpec("endstate.grading:tests_pass", {"runner": "django", "unguarded": ["twins", "tamper_guard"]})
    pytest_run = GraderSpec("endstate.grading:holdout", {"command": "python -m pytest -q tests"})
    assert unguarded_of([django, pytest_run]) == ("tamper_guard", "twins")
    assert unguarded_of([pytest_run]) == ()


def test_canaries_are_planted_only_where_the_image_s_pytest_runs_the_tests():
    """A canary is read by the image's pytest's guard alone; a project's own program would run it as one of its
    tests (pytest's own copy_example copies an example folder with it, and counts it)."""
    from endstate.grading import resolve
    from endstate.grading._pipeline import _runs_the_images_pytest

    def test_grader(name: str, runner: str):
        return resolve(f"endstate.grading:{name}", {"command": "pytest -rA a.py", "runner": runner, "tests": ["a.py::t"],
                                                    "unguarded": ["half_isolation", "tamper_guard", "twins",
                                                                  "value_twins"]})

    protected = resolve("endstate.grading:files_unchanged", {"paths": ["testing/**"]})
    assert not _runs_the_images_pytest([test_grader("tests_pass", "tree-pytest"), protected,
                                        test_grader("holdout", "tree-pytest")])
    assert _runs_the_images_pytest([resolve("endstate.grading:holdout", {"command": "python -m pytest a.py"})])
    assert _runs_the_images_pytest([protected])  # no test grader: a run may still come (a twins row, counting)
    assert _runs_the_images_pytest([])


def test_end_state_scans_changed_source_unless_a_test_grader_runs_the_tree_itself():
    from endstate.grading import resolve
    from endstate.grading._pipeline import _tests_the_runner

    unguarded = ["half_isolation", "tamper_guard", "twins", "value_twins"]
    tree = resolve("endstate.grading:holdout", {"command": "pytest -rA a.py", "runner": "tree-pytest",
                                                "tests": ["a.py::t"], "unguarded": unguarded})
    django = resolve("endstate.grading:holdout", {"command": "./tests/runtests.py a", "runner": "django",
                                                  "tests": ["t (a.T)"], "unguarded": unguarded})
    assert _tests_the_runner([tree]) and not _tests_the_runner([django])
    assert not _tests_the_runner([resolve("endstate.grading:holdout", {"command": "python -m pytest a.py"})])


def test_a_runners_canary_is_random_yet_leaves_nothing_random_in_what_is_kept():
    """Two canaries differ (name, numbers), and what a verdict keeps of a run's output says the same of both."""
    from endstate.grading._runners import LOG_RUNNERS

    made = [LOG_RUNNERS["django"].canary(["--verbosity", "2", "ops_tests.tests"], {"tests/ops_tests/__init__.py"})
            for _ in range(2)]
    assert made[0].source != made[1].source and made[0].argument != made[1].argument
    assert made[0].scrubbed(made[0].source.decode()) == made[1].scrubbed(made[1].source.decode())
    files = [LOG_RUNNERS["sympy"].canary(["a/tests/test_x.py"], {"a/tests/test_x.py"}) for _ in range(2)]
    assert files[0].path.startswith("a/tests/test_") and files[0].path != files[1].path
    assert files[0].scrubbed(files[0].source.decode() + files[0].path) == \
        files[1].scrubbed(files[1].source.decode() + files[1].path)
