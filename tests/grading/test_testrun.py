"""The harness's test runs, apart from Docker: command parsing, canary placement,
report reading, and the output tail (which must never show the random canary)."""

from __future__ import annotations

import pytest

from endstate.grading._testrun import (
    TestCommandError,
    _canary,
    _guard_report,
    _junit,
    _tail,
    collected_folders,
    parse_test_command,
    plant_canaries,
)
from endstate.sandbox import FileEntry


@pytest.mark.parametrize("command, expected", [
    ("python -m pytest -q tests", ("pytest", ["-q", "tests"], [])),
    ("python3 -m pytest", ("pytest", [], [])),
    ("pytest -x tests/test_a.py::test_b", ("pytest", ["-x", "tests/test_a.py::test_b"], [])),
    ("PYTHONPATH=src python -m pytest tests", ("pytest", ["tests"], ["PYTHONPATH=src"])),
    ("python -m unittest discover -s tests -t .", ("unittest", ["discover", "-s", "tests", "-t", "."], [])),
])
def test_test_commands_parse_into_runner_and_arguments(command, expected):
    assert parse_test_command(command) == expected


@pytest.mark.parametrize("command", ["make test", "python -m pytest tests && echo ok", "python run_tests.py",
                                     "pytest tests | tee log", "python -c 'import pytest'", "bash -c pytest"])
def test_anything_but_a_test_runner_is_refused(command):
    with pytest.raises(TestCommandError):
        parse_test_command(command)


PATHS = {"pkg/a.py", "tests/test_a.py", "tests/unit/test_b.py", "tests_holdout/test_h.py", "tests/helpers.py"}


def test_a_canary_goes_beside_every_folder_of_tests():
    planted = plant_canaries(PATHS)
    folders = sorted(path.rsplit("/", 1)[0] for path in planted)
    assert folders == ["tests", "tests/unit", "tests_holdout"]
    names = [name for name, _, _ in planted.values()]
    assert len(set(names)) == 3 and all(path.endswith(f"/{name}.py") for path, (name, _, _) in planted.items())
    # A project with no test files yet still gets one, at the root.
    assert [p.count("/") for p in plant_canaries({"pkg/a.py"})] == [0]


def test_a_canary_goes_only_where_a_command_collects_tests():
    # pylint-dev__pylint-4551: its pyreverse tests draw every module of tests/data, whose
    # `*_test.py` files are data; the runs name test files, which collect no canary beside them.
    paths = PATHS | {"tests/data/client_test.py"}
    named = ["python -m pytest -q tests/test_a.py tests/unit/test_b.py::test_b -o junit_logging=system-out"]
    assert collected_folders(named, paths) == set()
    assert plant_canaries(paths, collected_folders(named, paths)) == {}
    folder = ["python -m pytest -p no:cacheprovider tests/unit", "PYTHONPATH=src pytest -rA ./tests_holdout/ -k x"]
    assert collected_folders(folder, paths) == {"tests/unit", "tests_holdout"}
    planted = plant_canaries(paths, collected_folders(folder, paths))
    assert sorted(path.rsplit("/", 1)[0] for path in planted) == ["tests/unit", "tests_holdout"]
    # A run that names no path of the tree, the root, or not pytest's collects anywhere: a canary in every folder;
    # so does one whose option's value may be what it names (`-k pkg` collects every test whose name holds pkg).
    for anywhere in (["python -m pytest -q"], ["pytest ."], ["python -m unittest discover -s tests"], [None],
                     [*named, "python -m pytest -q -k pkg"], ["pytest --deselect tests/test_a.py::test_a"]):
        assert collected_folders(anywhere, paths) is None, anywhere
    assert len(plant_canaries(paths, None)) == 4


def test_each_canary_is_new_and_fails_by_construction():
    first, second = _canary("tests"), _canary("tests")
    assert first[0] != second[0] and first[0].startswith("tests/test_") and first[0].endswith(".py")
    source = first[2].decode()
    assert "class Test" in source and f"def {first[1]}(self)" in source and "assertEqual" in source
    left, right = first[3][1:]
    assert left != right and f"assertEqual({left}, {right})" in source


def _report(cases: str) -> bytes:
    return f'<testsuites><testsuite name="pytest">{cases}</testsuite></testsuites>'.encode()


def test_the_canary_is_left_out_of_the_counts_and_its_outcome_kept():
    cases = ('<testcase name="test_a"/><testcase name="test_b"><failure message="x"/></testcase>'
             '<testcase name="test_c"><skipped/></testcase><testcase name="test_1234abcd"><failure/></testcase>')
    assert _junit(_report(cases), {"test_1234abcd", "test_other"})[:5] == (3, 1, 0, 1, "failed")
    flipped = cases.replace('<testcase name="test_1234abcd"><failure/></testcase>', '<testcase name="test_1234abcd"/>')
    assert _junit(_report(flipped), {"test_1234abcd"})[:5] == (3, 1, 0, 1, "passed")
    assert _junit(_report('<testcase name="test_a"/>'), {"test_1234abcd"})[4] == "missing"
    assert _junit(b"not xml", {"x"}) is None


def test_what_a_failed_case_printed_is_kept_and_a_passing_ones_is_not():
    cases = ('<testcase classname="t" name="test_a"><failure message="assert 0"/><system-out>fetch failed\n</system-out>'
             '<system-err>and said so</system-err></testcase>'
             '<testcase classname="t" name="test_b"><system-out>fine</system-out></testcase>')
    assert _junit(_report(cases), set())[7] == {"t::test_a": "fetch failed\nand said so"}


def test_a_report_of_counts_that_are_not_numbers_does_not_read_and_raises_nothing():
    assert _junit(b'<testsuite tests="x" failures="0" errors="0" skipped="0"></testsuite>', {"x"}) is None


GUARD = b'{"findings": [], "report_sha256": "ab", "observed": {"tests": 1, "failures": 0, "errors": 0, "skipped": 0, "by_name": {"test_a": "passed"}}}'


@pytest.mark.parametrize("written", [
    b'{"findings": 5}',  # what a process that rewrote the file after the guard left
    b'{"findings": [], "report_sha256": null, "observed": {"tests": "x", "by_name": []}}',
    b'{}',
    b'[' * 50_000 + b']' * 50_000,
    GUARD.replace(b'"by_name": {"test_a": "passed"}', b'"by_name": ["test_a"]'),
])
def test_a_guard_report_the_guard_did_not_write_is_a_finding_never_a_crash(written):
    findings, digest, observed = _guard_report(FileEntry(0o644, written))
    assert findings and "the guard's report was rewritten" in findings[0], findings
    assert (digest, observed) == (None, None)
    assert _guard_report(FileEntry.symlink("/etc/passwd"))[0] is not None  # a link in its place too


def test_the_guards_own_report_reads_back_and_a_missing_or_empty_one_never_reported():
    findings, digest, observed = _guard_report(FileEntry(0o644, GUARD))
    assert (findings, digest, observed.tests, observed.by_name, observed.files) == ([], "ab", 1, {"test_a": "passed"}, {})
    assert _guard_report(None) == (None, None, None)
    long = GUARD.replace(b'"findings": []', b'"findings": ["' + b"x" * 10_000 + b'"]')
    assert _guard_report(FileEntry(0o644, long))[0] == ["x" * 300]  # a reason quotes it: kept short
    assert _guard_report(FileEntry(0o644, b"")) == (None, None, None)


def test_the_tail_drops_the_canary_and_the_runners_own_counts():
    output = ("FAILED tests/test_a.py::test_b - assert 1 == 2\n"
              "FAILED tests/test_9f8e7d6c.py::Test9f8e7d6c::test_9f8e7d6c - AssertionError: 123 != 1000456\n"
              "E   AssertionError: 123 != 1000456\n"
              "2 failed, 20 passed in 0.31s\n"
              "- generated xml file: /opt/endstate/report/abc.xml -\n")
    assert _tail(output, ("9f8e7d6c", "123", "1000456")) == "FAILED tests/test_a.py::test_b - assert 1 == 2"


def test_a_visible_only_run_is_denied_held_out_files_in_a_folder_of_their_own_only():
    """`tests_holdout/` is apart from the project: hidden. A held-out file among the project's own
    tests (a changed test file, a new one beside it) belongs to the run its tests_pass counted."""
    from endstate.grading._pipeline import _apart
    from endstate.sandbox import FileEntry

    entry = FileEntry(0o644, b"x")
    fixture = ["calc/ops.py", "tests/test_ops.py"]
    holdout = {"tests_holdout/test_more.py": entry, "tests/test_ops.py": entry, "tests/test_new.py": entry}
    assert _apart(holdout, fixture) == {"tests_holdout/test_more.py"}


def test_a_long_commands_reason_says_what_happened_to_it_within_a_line():
    """seaborn 3407's PASS_TO_PASS is a hundred node ids: its refusal, cut to one line, ended inside the command."""
    from endstate.grading._builtin import _distrusted
    from endstate.grading._testrun import TestRun

    command = "python -m pytest -q " + " ".join(f"tests/test_axisgrid.py::TestFacetGrid::test_{n}" for n in range(100))
    reason = _distrusted(TestRun(exit_code=2, timed_out=False, output_tail="ImportError: no seaborn"), command,
                         "tests").reason
    assert reason.startswith("tests: `python -m pytest -q tests/test_axisgrid.py::TestFacetGrid::test_0 ") and \
        "... (104 words)` produced no test report (exit 2): ImportError: no seaborn" in reason and len(reason) < 220
    short = _distrusted(TestRun(exit_code=0, timed_out=True, output_tail=""), "python -m pytest -q tests", "tests")
    assert short.reason == "tests: `python -m pytest -q tests` timed out"
