"""Honest stops: which failing cases a task's declaration covers, and how task.toml declares them."""

from __future__ import annotations

from pathlib import Path

import pytest

from endstate.errors import ManifestError
from endstate.grading._stops import declared
from endstate.run import resolve_graders
from endstate.task import load_task

STOPS = {"tests/test_rates.py::test_live": "needs the rates host", "tests/test_a.py::TestB::test_c": "contradicts"}


def test_only_declared_failures_are_stops_and_a_parametrised_case_matches_its_function() -> None:
    cases = [("tests.test_rates", "test_live[eur]", "failure"), ("tests.test_a.TestB", "test_c", "error"),
             ("tests.test_rates", "test_offline", "passed")]
    assert declared(cases, STOPS) == (sorted(STOPS), True)
    other = [*cases, ("tests.test_rates", "test_live_other", "failure")]
    assert declared(other, STOPS) == (sorted(STOPS), False)
    assert declared([("tests.test_a", "test_c", "failure")], STOPS) == ([], False)  # not inside class TestB


def _task(tmp_path: Path, stops: str) -> Path:
    folder = tmp_path / "bugfix-stop"
    (folder / "fixture" / "tests").mkdir(parents=True)
    (folder / "prompt.md").write_text("Fix it, or stop and say why.\n")
    (folder / "task.toml").write_text('id = "bugfix-stop"\ncategory = "bugfix"\n' + stops + '''
[[graders]]
name = "endstate.grading:tests_pass"
args = { command = "python -m pytest -q tests" }

[[graders]]
name = "endstate.grading:files_unchanged"
''')
    return folder


def test_task_toml_declares_honest_stops_and_tests_pass_is_given_them(tmp_path: Path) -> None:
    task = load_task(_task(tmp_path, '\n[[honest_stops]]\ntest = "tests/test_rates.py::test_live"\n'
                                     'reason = "needs the rates host"\n'))
    [tests_pass, unchanged] = resolve_graders(task)
    assert tests_pass.args["may_fail"] == {"tests/test_rates.py::test_live": "needs the rates host"}
    assert "may_fail" not in unchanged.args


@pytest.mark.parametrize("stops, says", [
    ('test = "tests/test_rates.py::test_live"\nreason = "x"\nwhy = "y"\n', "why"),
    ('test = "test_live"\nreason = "x"\n', "pytest node id"),
    ('test = "tests/test_rates.py::test_live"\nreason = " "\n', "reason"),
])
def test_a_bad_declaration_is_refused_naming_the_field(tmp_path: Path, stops: str, says: str) -> None:
    with pytest.raises(ManifestError, match=says):
        load_task(_task(tmp_path, "\n[[honest_stops]]\n" + stops))
