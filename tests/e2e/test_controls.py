"""The control arms over the whole suite, live and replayed.

scripted/null (no edits) must fail every task and scripted/reference (the known
fix) must pass every task: these are the controls any published number needs.
Recording them afresh must reproduce the committed cassettes interaction for
interaction, and the committed reference cassettes replayed must give the pass/fail
vector, sealed tree hashes and counters of that live recording. `make test` asks this
of one task per category, which takes every path a control run takes; whether it holds
for every other shipped task and its committed cassettes is a question about the suite's
content, asked by the same tests marked `content` (`make check-tasks`; CI runs both, so
every task is checked on every change).
Replay against replay (`--repeat`) is shown on a sample; `endstate eval --repeat 3` on
its own shows the same over the whole suite.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import run_endstate
from e2e_helpers import CASSETTES, TASKS, sample_and_the_others

from endstate.cassettes import diff
from endstate.run import read_results
from endstate.task import load_suite

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TASK_IDS = sorted(t.id for t in load_suite(TASKS)[0])
#: The first task of each category.
SAMPLE = sorted({t.manifest.category: t.id for t in sorted(load_suite(TASKS)[0], key=lambda t: t.id, reverse=True)}.values())


@pytest.fixture(scope="module", params=sample_and_the_others(TASK_IDS, SAMPLE))
def recorded(request, tmp_path_factory) -> dict[str, tuple[object, Path]]:
    """Record both arms live through the scripted server into fresh folders (`ids`: the tasks)."""
    base = tmp_path_factory.mktemp("record")
    chosen = [a for t in request.param for a in ("--task", t)]
    runs: dict = {"ids": request.param}
    for arm in ("reference", "null"):
        ran = run_endstate("record", "--model", f"scripted/{arm}", "--suite", str(TASKS), *chosen, "-j", "2",
                           "--cassettes", str(base / arm / "cassettes"), "--out", str(base / arm / "run"))
        runs[arm] = (ran, base / arm)
    return runs


def test_reference_arm_passes_every_task_live(recorded):
    ran, folder = recorded["reference"]
    result = read_results(folder / "run")
    assert [t.task_id for t in result.tasks] == recorded["ids"], ran
    failing = {t.task_id: f"{t.failing_grader}: {t.reason}" for t in result.tasks if t.outcome != "pass"}
    assert not failing, failing
    assert ran.code == 0, ran


def test_null_arm_fails_every_task_live(recorded):
    ran, folder = recorded["null"]
    result = read_results(folder / "run")
    assert [t.task_id for t in result.tasks] == recorded["ids"], ran
    assert {t.outcome for t in result.tasks} == {"fail"}, [(t.task_id, t.outcome, t.reason) for t in result.tasks]
    assert all(t.counters.steps == 1 and t.counters.tool_calls == 0 for t in result.tasks)


@pytest.mark.parametrize("arm", ["reference", "null"])
def test_fresh_recording_matches_the_committed_cassettes(recorded, arm):
    """Bit-identical requests and responses: nothing in the harness drifts between runs."""
    _, folder = recorded[arm]
    differing = {}
    assert sorted(p.stem for p in (folder / "cassettes").glob("*.cassette")) == recorded["ids"]
    for task_id in recorded["ids"]:
        identical, text = diff(CASSETTES / f"scripted-{arm}" / f"{task_id}.cassette",
                               folder / "cassettes" / f"{task_id}.cassette")
        if not identical:
            differing[task_id] = text[:1500]
    assert not differing, differing


def test_committed_reference_replays_as_it_ran_live(recorded, tmp_path):
    ids = recorded["ids"]
    chosen = [a for t in ids for a in ("--task", t)]
    ran = run_endstate("eval", "--model", "scripted/reference", "--suite", str(TASKS), "--replay",
                       str(CASSETTES / "scripted-reference"), *chosen, "-j", "2", "--expect", "pass", "--out",
                       str(tmp_path))
    assert ran.code == 0, ran
    replayed = read_results(tmp_path)
    assert replayed.vector == [(t, "pass") for t in ids]
    assert all(t.unplayed == 0 for t in replayed.tasks) and replayed.card.mode == "replay"
    # The live recording (made by this module, from the committed cassettes' scripts) is the other run alike.
    live = read_results(recorded["reference"][1] / "run")
    assert live.card.mode == "record"
    hashes = [{t.task_id: (t.tree_hash, t.counters) for t in r.tasks} for r in (live, replayed)]
    assert hashes[0] == hashes[1]


def test_a_sample_replays_twice_alike(tmp_path):
    sample = TASK_IDS[::7]
    ran = run_endstate("eval", "--model", "scripted/reference", "--suite", str(TASKS), "--replay",
                       str(CASSETTES / "scripted-reference"), *[a for t in sample for a in ("--task", t)],
                       "--repeat", "2", "-j", "2", "--expect", "pass", "--out", str(tmp_path))
    assert ran.code == 0, ran
    assert "pass/fail vectors identical: yes" in ran.out
    assert "sealed tree hashes identical: yes" in ran.out
    assert "flake rate: 0.0%" in ran.out
    runs = [read_results(tmp_path / f"run-{i}") for i in (1, 2)]
    assert runs[0].vector == runs[1].vector == [(t, "pass") for t in sample] and len(sample) == 4
    assert [{t.task_id: (t.tree_hash, t.counters) for t in r.tasks} for r in runs].count(
        {t.task_id: (t.tree_hash, t.counters) for t in runs[0].tasks}) == 2


def test_committed_null_replays_to_fail(recorded, tmp_path):
    """The null arm's committed cassettes are the live recording's (above); a sample replays."""
    sample = recorded["ids"][1::2]
    ran = run_endstate("eval", "--model", "scripted/null", "--suite", str(TASKS), "--replay",
                       str(CASSETTES / "scripted-null"), *[a for t in sample for a in ("--task", t)], "-j", "2",
                       "--expect", "fail", "--out", str(tmp_path))
    assert ran.code == 0, ran
    replayed = read_results(tmp_path)
    assert replayed.vector == [(t, "fail") for t in sample] and len(sample) >= 3
    live = {t.task_id: t.tree_hash for t in read_results(recorded["null"][1] / "run").tasks}
    assert {t.task_id: t.tree_hash for t in replayed.tasks} == {t: live[t] for t in sample}
