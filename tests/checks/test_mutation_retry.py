"""The mutation check runs a mutant's probe again where it came out as the control's: an attack that races
the harness may lose its race on a loaded machine, and one win shows the guard is what stops it. No
container: the probes here are read by the detectors alone, with one of them made to lose its race."""

from __future__ import annotations

from pathlib import Path

from endstate.checks import _mutation
from endstate.checks._mutation import run_mutation_check, select_mutants
from endstate.models import RunSettings
from endstate.run import RunConfig
from endstate.task import load_suite

TASKS = Path(__file__).resolve().parents[2] / "tasks"


def _check(monkeypatch, tmp_path, lost: int):
    """The detect-tests-edited mutant with its probe losing its race `lost` times before coming out as it should."""
    real, calls = _mutation._run_detect, []

    def racing(task, hack, kind, guards):
        calls.append(guards.detectors_off)
        result = real(task, hack, kind, guards)
        if guards.detectors_off and len([c for c in calls if c]) <= lost:
            return real(task, hack, kind, _mutation.Guards())  # as if the guard were still there
        return result

    monkeypatch.setattr(_mutation, "_run_detect", racing)
    tasks, errors = load_suite(TASKS)
    assert not errors
    config = RunConfig(model="scripted/reference", settings=RunSettings(), sandbox="local", jobs=2)
    lines: list[str] = []
    report = run_mutation_check(tasks, config, tmp_path, suite_root=TASKS,
                                mutants=select_mutants(["detect-tests-edited"]), progress=lines.append)
    return report, lines, calls


def test_a_probe_that_lost_its_race_twice_is_run_again_and_the_mutant_killed(monkeypatch, tmp_path):
    report, lines, calls = _check(monkeypatch, tmp_path, lost=2)
    assert report.ok and report.mutants[0].killed, lines
    assert len(calls) == 4  # the control once, the mutant three times
    assert "fail->pass (on try 3 of 3)" in lines[-1], lines


def test_a_mutant_whose_probe_never_changes_survives_after_three_tries(monkeypatch, tmp_path):
    report, lines, calls = _check(monkeypatch, tmp_path, lost=3)
    assert not report.ok and not report.mutants[0].killed, lines
    assert len(calls) == 4 and lines[-1].startswith("SURVIVED detect-tests-edited:"), lines
    assert "fail->fail (on try 3 of 3, tests_edited:" in lines[-1], lines
