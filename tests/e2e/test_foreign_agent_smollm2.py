"""mini-swe-agent driven by a real model: SmolLM2 under llama.cpp (`endstate serve-local`),
recorded live over the whole suite and committed (cassettes/mini-swe-agent-smollm2, the
live run's results in bench/results/mini-swe-agent-smollm2).

The tasks that bound a counter the harness cannot see inside a foreign agent (denied calls,
compactions, resumes) were refused by name and have no recording; the others replay offline
to the live run's vector, sealed tree hashes, stop reasons and counters. One replay here, to
keep CI's budget, of a sample: every fifth recorded task and one refused one.
`bench/foreign_agent_replay.py` replays the whole set three times and compares them."""

from __future__ import annotations

import pytest
from cli_runner import run_endstate
from e2e_helpers import CASSETTES, ROOT, TASKS

from endstate.agents import find_agent, refusal
from endstate.run import read_results, vector_of
from endstate.task import load_suite

RECORDED = CASSETTES / "mini-swe-agent-smollm2"
LIVE = ROOT / "bench" / "results" / "mini-swe-agent-smollm2"
_SUITE = load_suite(TASKS)[0]
REFUSED = sorted(t.id for t in _SUITE if refusal(t, find_agent("mini-swe-agent")))
OBSERVABLE = sorted(t.id for t in _SUITE if t.id not in REFUSED)
SAMPLE = OBSERVABLE[::5] + REFUSED[:1]  # fixed, so each CI run replays the same tasks


def test_the_recordings_cover_exactly_the_tasks_the_agent_can_be_graded_on():
    assert (len(OBSERVABLE), len(REFUSED)) == (14, 8)
    assert sorted(p.stem for p in RECORDED.glob("*.cassette")) == OBSERVABLE


def test_the_live_run_refused_the_others_by_name():
    live = {t.task_id: t for t in read_results(LIVE).tasks}
    assert sorted(live) == sorted(OBSERVABLE + REFUSED)
    for task_id in REFUSED:
        assert (live[task_id].outcome, live[task_id].stop_reason) == ("error", "refused")
        assert live[task_id].reason.startswith(f"refused: task {task_id} requires "), live[task_id].reason
    assert all(live[t].stop_reason != "refused" and live[t].counters.steps > 0 for t in OBSERVABLE)


@pytest.mark.docker
@pytest.mark.slow
def test_the_replay_gives_the_live_runs_vector_and_sealed_trees(tmp_path):
    ran = run_endstate("eval", "--agent", "mini-swe-agent", "--suite", str(TASKS), "--replay", str(RECORDED),
                       *[a for t in SAMPLE for a in ("--task", t)], "-j", "2", "--out", str(tmp_path), timeout=1800)
    assert ran.code == 1, ran  # the refused task is an error; nothing else went wrong
    for task_id in REFUSED[:1]:  # said whole on its progress line: the task, the counter, the agent
        line = next(x for x in ran.out.splitlines() if f"ERROR      {task_id}  refused: " in x)
        assert line.endswith("run it with endstate's own loop") and "agent mini-swe-agent" in line, line
    replayed, live = read_results(tmp_path), read_results(LIVE)
    sampled = [t for t in live.tasks if t.task_id in SAMPLE]
    assert replayed.card.agent == live.card.agent and replayed.card.agent.startswith("mini-swe-agent@")
    assert len(replayed.tasks) == len(SAMPLE) and replayed.vector == vector_of(sampled)
    assert all(t.outcome != "divergence" and t.unplayed == 0 for t in replayed.tasks), ran
    before = {t.task_id: t for t in sampled}
    for task in replayed.tasks:  # the same end state and the same counted run as live
        assert (task.tree_hash, task.stop_reason, task.counters) == (
            before[task.task_id].tree_hash, before[task.task_id].stop_reason, before[task.task_id].counters), task.task_id
