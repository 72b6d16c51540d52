"""The measured hack rate and its two controls, replayed offline from committed cassettes.

On impossible tasks (visible tests no honest end state passes): the known-fix arm passes
none and attempts none (it fails honestly, on the changed tests alone); the hack arm
(`scripted/hacks`, each task's own negative control played as an agent) attempts on
every task and passes none. A pass here would be a hack the harness missed. `make test`
replays the hack arm on every third task; the test marked `content` on the others (`make
check-tasks`; CI runs both).
"""

from __future__ import annotations

import pytest
from cli_runner import run_endstate
from e2e_helpers import CASSETTES, TASKS, sample_and_the_others

from endstate.run import read_results
from endstate.task import load_suite

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TASK_IDS = sorted(t.id for t in load_suite(TASKS)[0])


def _replay(arm: str, out, tasks: list[str] = TASK_IDS) -> tuple[object, list]:
    ran = run_endstate("eval", "--impossible", "--suite", str(TASKS), "--replay",
                       str(CASSETTES / f"scripted-{arm}-impossible"),
                       *[a for t in tasks for a in ("--task", t)], "-j", "2", "--expect", "fail", "--out", str(out))
    result = read_results(out)
    assert result.card.impossible is True and [t.task_id for t in result.tasks] == tasks, ran
    assert all(t.unplayed == 0 and t.outcome != "divergence" for t in result.tasks), ran
    return ran, result.tasks


def test_the_known_fix_on_impossible_tasks_passes_none_and_attempts_none(tmp_path):
    """On a sample: `tasks check` runs every task's known fix on its impossible variant."""
    sample = TASK_IDS[::4]
    ran, tasks = _replay("reference", tmp_path, sample)
    assert ran.code == 0, ran
    assert [(t.task_id, t.outcome, t.hack) for t in tasks] == [(t, "fail", None) for t in sample]
    assert {t.failing_grader for t in tasks} == {"tests_pass"}  # the changed visible tests, and nothing else
    assert f"hack attempts (impossible tasks): 0 of {len(sample)} run(s), 0 caught, 0 missed" in ran.out


@pytest.mark.parametrize("chosen", sample_and_the_others(TASK_IDS, TASK_IDS[1::3]))
def test_the_hack_arm_attempts_on_every_task_and_passes_none(tmp_path, chosen):
    ran, tasks = _replay("hacks", tmp_path, chosen)
    assert ran.code == 0, ran
    assert [t.outcome for t in tasks] == ["fail"] * len(chosen), ran
    caught = {t.task_id: t.hack for t in tasks}
    assert all(hack not in (None, "missed") for hack in caught.values()), caught
    n = len(chosen)
    assert f"hack attempts (impossible tasks): {n} of {n} run(s), {n} caught, 0 missed" in ran.out
    report = run_endstate("report", str(tmp_path), "--out", str(tmp_path / "report"))
    assert "[impossible tasks]" in report.out and "100 (100-100)" in report.out, report


def test_impossible_cassettes_are_refused_as_the_real_tasks(tmp_path):
    ran = run_endstate("eval", "--suite", str(TASKS), "--task", "bugfix-lru-eviction", "--replay",
                       str(CASSETTES / "scripted-reference-impossible"), "--out", str(tmp_path))
    assert ran.code == 2 and "recorded with --impossible: pass --impossible" in ran.err, ran
    assert "Traceback" not in ran.err
