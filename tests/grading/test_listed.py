"""The tests a pytest run is graded on where the task lists them apart from the files it runs (_listed.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from endstate.errors import ManifestError
from endstate.grading._listed import listed_cases
from endstate.grading._testrun import CaseOutcome, TestRun, case_counts
from endstate.task import load_task

PASSED, FAILURE, SKIPPED = CaseOutcome.PASSED, CaseOutcome.FAILURE, CaseOutcome.SKIPPED


def _run(cases: list[tuple[str, str, CaseOutcome]], files: dict[str, str] | None = None) -> TestRun:
    return TestRun(exit_code=1, timed_out=False, output_tail="", report_found=True, cases=cases, files=files or {})


CASES = [("astropy.time.tests.test_basic", "test_first_conversion", FAILURE),
         ("astropy.time.tests.test_basic.TestBasic", "test_later", PASSED),
         ("astropy.time.tests.test_basic", "test_later", SKIPPED),
         ("astropy.time.tests.test_basic", "test_param[a::b-1]", PASSED),
         ("astropy.time.tests.test_basic", "test_param[c-2]", FAILURE)]


def test_only_the_listed_ids_are_counted_each_by_its_file_classes_and_name() -> None:
    listed = listed_cases(_run(CASES), ["astropy/time/tests/test_basic.py::TestBasic::test_later",
                                        "astropy/time/tests/test_basic.py::test_param[a::b-1]"])
    assert listed.cases == [CASES[1], CASES[3]] and listed.missing == [] and listed.others == 3
    assert case_counts(listed.cases) == (2, 0, 0, 0)
    # a function outside the class is another test; an id without parameters names every case of its function
    listed = listed_cases(_run(CASES), ["astropy/time/tests/test_basic.py::test_later",
                                        "astropy/time/tests/test_basic.py::test_param"])
    assert listed.cases == [CASES[2], CASES[3], CASES[4]] and case_counts(listed.cases) == (3, 1, 0, 1)


def test_an_id_no_case_answers_is_missing() -> None:
    listed = listed_cases(_run(CASES), ["astropy/time/tests/test_basic.py::TestBasic::test_first_conversion",
                                        "astropy/time/tests/test_other.py::test_later",
                                        "astropy/time/tests/test_basic.py::test_param[c-3]"])
    assert listed.cases == [] and len(listed.missing) == 3


def test_where_the_guard_saw_the_file_it_decides_whatever_the_rootdir_made_the_class_name() -> None:
    """pytest names a case's class from its rootdir: under a rootdir below the workspace the names lose the
    folders above it, and the file the guard saw is what places it."""
    cases = [("tests.test_x", "test_a", PASSED), ("tests.test_x.TestY", "test_b", PASSED)]
    files = {"tests.test_x::test_a": "pkg/tests/test_x.py", "tests.test_x.TestY::test_b": "pkg/tests/test_x.py"}
    listed = listed_cases(_run(cases, files), ["pkg/tests/test_x.py::test_a", "pkg/tests/test_x.py::TestY::test_b",
                                               "other/tests/test_x.py::test_a"])
    assert listed.cases == cases and listed.missing == ["other/tests/test_x.py::test_a"]


def _task(tmp_path: Path, grader: str, args: str) -> Path:
    folder = tmp_path / "bugfix-listed"
    (folder / "fixture" / "tests").mkdir(parents=True)
    (folder / "prompt.md").write_text("Fix it.\n")
    (folder / "task.toml").write_text(f'id = "bugfix-listed"\ncategory = "bugfix"\n\n[[graders]]\n'
                                      f'name = "endstate.grading:{grader}"\nargs = {{ {args} }}\n')
    return folder


def test_tests_pass_may_list_pytest_node_ids_apart_from_its_command(tmp_path: Path) -> None:
    task = load_task(_task(tmp_path, "tests_pass", 'command = "python -m pytest -q tests/test_a.py", '
                                                   'tests = ["tests/test_a.py::test_b"]'))
    assert task.manifest.graders[0].args["tests"] == ["tests/test_a.py::test_b"]


@pytest.mark.parametrize("grader, tests, says", [
    ("holdout", '["tests/test_a.py::test_b"]', "each meets its twins by node id"),
    ("tests_pass", '["test_b"]', "pytest node ids"),
    ("tests_pass", "[]", "pytest node ids"),
])
def test_listed_ids_pytest_cannot_grade_so_are_refused_naming_the_field(tmp_path: Path, grader: str, tests: str,
                                                                      says: str) -> None:
    with pytest.raises(ManifestError, match=says) as raised:
        load_task(_task(tmp_path, grader, f'command = "python -m pytest -q tests", tests = {tests}'))
    assert "graders[0].args.tests" in str(raised.value)
