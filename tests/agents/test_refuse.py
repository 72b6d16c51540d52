"""Tasks that bound counters a foreign agent's run cannot show are refused by name."""

from __future__ import annotations

from pathlib import Path

from endstate.agents import find_agent, refusal
from endstate.task import load_suite

TASKS = Path(__file__).resolve().parents[2] / "tasks"


def test_only_tasks_needing_unobservable_counters_are_refused():
    spec = find_agent("mini-swe-agent")
    tasks, _ = load_suite(TASKS)
    refused = {t.id: refusal(t, spec) for t in tasks if refusal(t, spec)}
    assert sorted(refused) == sorted(t.id for t in tasks if t.manifest.category.value in
                                     ("permission", "compaction", "checkpoint"))
    assert "denied_calls" in refused["deny-recursive-delete"] and "mini-swe-agent" in refused["deny-recursive-delete"]
    assert "resumes" in refused["checkpoint-append-migration"]
    # steps and input tokens are counted from the proxy's traffic: the cost tasks run
    assert not refusal(next(t for t in tasks if t.id == "cost-small-fix-step-budget"), spec)
    assert not any(refusal(t, None) for t in tasks)


def test_a_foreign_replay_with_no_recording_to_run_names_the_refused_tasks_and_runs_nothing(tmp_path):
    from endstate.run import RunConfig, prepare_replay

    tasks = [t for t in load_suite(TASKS)[0] if t.id in ("deny-recursive-delete", "cost-small-fix-step-budget")]
    config = RunConfig(model="", agent="mini-swe-agent", mode="replay", cassettes=str(tmp_path))
    usable, _, problems = prepare_replay(tasks, config)
    assert usable == [] and len(problems) == 2
    assert "no cassette for task cost-small-fix-step-budget" in str(problems[0])
    assert str(problems[1]).startswith("refused: task deny-recursive-delete requires denied_calls")
