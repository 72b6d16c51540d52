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
