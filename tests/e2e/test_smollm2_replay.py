"""A real model's recordings: SmolLM2 under llama.cpp, recorded live over the whole
suite and committed. Replayed offline they must give the pass/fail vector, sealed trees,
stop reasons and counters of the live run that made them (two runs that agree; replay
against replay is the scripted arms', tests/e2e/test_controls.py).

Two sets: the first recording (chat format `chatml-function-calling`, under which tool
results never reached the model's prompt), replayed here on a sample of every third
task, and the one with endstate's chat format, where they do (temperature 0.7, seed 1;
seed 2 is committed beside it for `compare`), replayed on every third task from the second,
and on the others by the test marked `content` (`make check-tasks`; CI runs both)."""

from __future__ import annotations

import pytest
from cli_runner import run_endstate
from e2e_helpers import CASSETTES, ROOT, TASKS

from endstate.run import read_results
from endstate.task import load_suite

pytestmark = [pytest.mark.docker, pytest.mark.slow]

#: Each recording with its committed results: the live run's, or (tools-seed-*) the live
#: run regraded by strict replay on the current graders, whose end states match it.
RECORDINGS = {
    "first": (CASSETTES / "openai-compatible-smollm2", ROOT / "bench" / "results" / "smollm2-live-results.json"),
    "tools-seed-1": (CASSETTES / "smollm2-tools-seed-1", ROOT / "bench" / "results" / "smollm2-tools-seed-1"),
}
#: The replays: which recording, on which of its tasks.
REPLAYS = [pytest.param("first", lambda i: i % 3 == 0, id="first"),
           pytest.param("tools-seed-1", lambda i: i % 3 == 1, id="tools-seed-1"),
           pytest.param("tools-seed-1", lambda i: i % 3 != 1, id="tools-seed-1-the-others", marks=pytest.mark.content)]


@pytest.mark.parametrize("name", [*RECORDINGS, "tools-seed-2"])
def test_smollm2_cassettes_cover_the_suite(name):
    recorded = RECORDINGS[name][0] if name in RECORDINGS else CASSETTES / f"smollm2-{name}"
    assert sorted(p.stem for p in recorded.glob("*.cassette")) == sorted(t.id for t in load_suite(TASKS)[0])


@pytest.mark.parametrize(("name", "chosen"), REPLAYS)
def test_smollm2_replays_and_matches_the_live_run(tmp_path, name, chosen):
    RECORDED, LIVE = RECORDINGS[name]
    live = read_results(LIVE)
    sample = [t.task_id for i, t in enumerate(live.tasks) if chosen(i)]
    ran = run_endstate("eval", "--model", "openai-compatible/smollm2", "--tool-choice", "auto", "--suite", str(TASKS),
                       "--replay", str(RECORDED), *[a for t in sample for a in ("--task", t)], "-j", "2",
                       "--out", str(tmp_path))
    replayed = read_results(tmp_path)
    assert all(t.outcome != "divergence" and t.unplayed == 0 for t in replayed.tasks), ran
    before = {t.task_id: t for t in live.tasks}
    assert replayed.vector == [(t, before[t].outcome) for t in sample] and len(sample) >= 7
    for task in replayed.tasks:  # the same end state and the same counted run as live
        assert (task.tree_hash, task.stop_reason, task.counters) == (
            before[task.task_id].tree_hash, before[task.task_id].stop_reason, before[task.task_id].counters), task.task_id
