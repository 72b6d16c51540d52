"""The first real model's recordings: SmolLM2 under llama.cpp, recorded live over the
whole suite and committed. Replayed offline they must give the same pass/fail vector
three times over, and the same verdicts as the live run that made them."""

from __future__ import annotations

import pytest

from endstate.suite import load_suite, read_results

from e2e_helpers import CASSETTES, ROOT, TASKS, endstate

pytestmark = [pytest.mark.docker, pytest.mark.slow]

RECORDED = CASSETTES / "openai-compatible-smollm2"
#: The results of the live run that made the recordings.
LIVE = ROOT / "bench" / "results" / "smollm2-live-results.json"


def test_smollm2_cassettes_cover_the_suite():
    assert sorted(p.stem for p in RECORDED.glob("*.cassette")) == sorted(t.id for t in load_suite(TASKS)[0])


def test_smollm2_replays_identically_and_matches_the_live_run(tmp_path):
    ran = endstate("eval", "--model", "openai-compatible/smollm2", "--tool-choice", "auto", "--suite", str(TASKS),
                   "--replay", str(RECORDED), "--repeat", "3", "-j", "2", "--out", str(tmp_path))
    assert "pass/fail vectors identical: yes" in ran.out, ran
    assert "sealed tree hashes identical: yes" in ran.out, ran
    runs = [read_results(tmp_path / f"run-{i}") for i in (1, 2, 3)]
    assert all(t.outcome != "divergence" and t.unplayed == 0 for r in runs for t in r.tasks), ran
    live = {t.task_id: t for t in read_results(LIVE).tasks}
    assert runs[0].vector == read_results(LIVE).vector
    for task in runs[0].tasks:  # the same end state and the same counted run as live
        assert (task.tree_hash, task.stop_reason, task.counters) == (
            live[task.task_id].tree_hash, live[task.task_id].stop_reason, live[task.task_id].counters), task.task_id
