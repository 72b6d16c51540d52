"""What the program agents' tests share: their committed control arms cover the core tasks
and replay offline to the live run's end states (a sample here; bench/foreign_agent_replay.py
replays the whole sets three times)."""

from __future__ import annotations

from pathlib import Path

from cli_runner import run_endstate
from e2e_helpers import TASKS

from endstate.agents import find_agent
from endstate.cassettes import load
from endstate.run import RunResult, read_results
from endstate.task import load_suite


def task_args(ids: list[str]) -> list[str]:
    return [arg for task in ids for arg in ("--task", task)]


def check_recordings_cover_the_core_tasks(agent_name: str, reference: Path, null: Path, reference_live: Path) -> None:
    core = sorted(t.id for t in load_suite(TASKS)[0] if t.manifest.category.value in ("bugfix", "feature", "refactor"))
    agent = find_agent(agent_name)
    assert agent is not None and len(core) == 12
    for folder in (reference, null):
        assert sorted(p.stem for p in folder.glob("*.cassette")) == core, folder
        # A changed agent file is a different agent: its recordings must be made again.
        assert {load(p).header.agent for p in folder.glob("*.cassette")} == {agent.id}, folder
    assert read_results(reference_live).vector == [(task, "pass") for task in core]
    ran = run_endstate("cassette", "diff", str(reference / f"{core[0]}.cassette"), str(null / f"{core[0]}.cassette"))
    assert ran.code == 1 and "first difference at agent turn 0" in ran.out, ran


def check_sample_replays_to_the_live_end_states(agent: str, reference: Path, null: Path, reference_live: Path,
                                                sample: list[str], out: Path) -> RunResult:
    ran = run_endstate("eval", "--agent", agent, "--replay", str(reference), *task_args(sample), "-j", "2",
                       "--expect", "pass", "--out", str(out / "reference"), timeout=3600)
    assert ran.code == 0, ran
    replayed, live = read_results(out / "reference"), read_results(reference_live)
    assert replayed.card.agent == live.card.agent and replayed.vector == [(task, "pass") for task in sample]
    before = {t.task_id: t for t in live.tasks}
    for task in replayed.tasks:  # the same end state and the same counted run as live
        assert task.unplayed == 0 and task.counters.steps > 1, task.task_id
        assert (task.tree_hash, task.stop_reason, task.counters) == (
            before[task.task_id].tree_hash, before[task.task_id].stop_reason, before[task.task_id].counters), task.task_id
    ran = run_endstate("eval", "--agent", agent, "--replay", str(null), *task_args(sample), "-j", "2",
                       "--out", str(out / "null"), timeout=3600)
    null_run = read_results(out / "null")
    assert null_run.vector == [(task, "fail") for task in sample], ran
    assert all(t.unplayed == 0 and t.counters.steps == 1 and t.stop_reason == "model_stopped"
               for t in null_run.tasks), null_run.tasks
    return replayed


def check_the_hack_arm(agent_name: str, hacks: Path, hacks_live: Path, sample: list[str], out: Path) -> None:
    """The hack arm through the agent (each core task's own hack, in the agent's tools): recorded on
    the twelve core tasks, every one caught and none passed; a sample replays offline to the same
    end states, caught by the same assertion."""
    agent = find_agent(agent_name)
    assert agent is not None
    live = read_results(hacks_live)
    core = sorted(t.id for t in load_suite(TASKS)[0] if t.manifest.category.value in ("bugfix", "feature", "refactor"))
    assert sorted(p.stem for p in hacks.glob("*.cassette")) == core and len(core) == 12, hacks
    assert {load(p).header.agent for p in hacks.glob("*.cassette")} == {agent.id}, hacks
    assert live.vector == [(task, "fail") for task in core]
    assert all(t.hack and t.hack != "missed" and t.counters.steps > 1 for t in live.tasks), live.tasks
    ran = run_endstate("eval", "--agent", agent_name, "--replay", str(hacks), *task_args(sample), "-j", "2",
                       "--expect", "fail", "--out", str(out), timeout=3600)
    assert ran.code == 0, ran
    replayed = read_results(out)
    assert replayed.vector == [(task, "fail") for task in sample] and replayed.card.agent == agent.id
    assert replayed.card.agent_version == agent.version and replayed.card.tasks_hash != replayed.card.task_pack_hash
    before = {t.task_id: t for t in live.tasks}
    for task in replayed.tasks:
        was = before[task.task_id]
        assert task.unplayed == 0 and (task.tree_hash, task.hack, task.stop_reason, task.counters) == (
            was.tree_hash, was.hack, was.stop_reason, was.counters), task.task_id
