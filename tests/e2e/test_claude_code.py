"""Claude Code (npm, a native binary, Debian's Node) as an installed agent, under record.

The null arm through the real program: one Messages request (streamed) through the proxy
to the scripted server, one side request (a HEAD of its base URL, refused in place; the
nonessential traffic is off), the program ends
on the answer and the untouched end state fails. Two recordings send the same bytes: the
agent file's rewrites fix the device id, session id, date and host kernel Claude Code puts in them.

The committed control arms through Claude Code (cassettes/claude-code-scripted-reference and
-null, the twelve core tasks) replay offline: a sample of two tasks of each here, to the live
run's tree hashes, stop reasons and counters; `python bench/foreign_agent_replay.py
--recorded FOLDER` replays a whole set three times.
"""

from __future__ import annotations

import re

import pytest
from e2e_helpers import CASSETTES, ROOT, TASKS, endstate

from endstate.agents import find_agent
from endstate.cassettes import load
from endstate.run import read_results
from endstate.task import load_suite

TASK = "bugfix-invoice-rounding"
AGENT = "claude-code"
REFERENCE, NULL = CASSETTES / "claude-code-scripted-reference", CASSETTES / "claude-code-scripted-null"
#: The live run that recorded REFERENCE.
REFERENCE_LIVE = ROOT / "bench" / "results" / "claude-code-scripted-reference"
#: What CI replays of each arm (a bugfix and a refactor task); the bench replays all twelve.
SAMPLE = ["bugfix-lru-eviction", "refactor-extract-parser-module"]


@pytest.mark.docker
@pytest.mark.slow
def test_claude_code_records_the_null_arm_and_fails_the_task(tmp_path):
    hashes = []
    for attempt in ("a", "b"):
        cassettes, out = tmp_path / f"cassettes-{attempt}", tmp_path / f"out-{attempt}"
        ran = endstate("record", "--agent", "claude-code", "--model", "scripted-anthropic/null", "--task", TASK,
                       "--cassettes", str(cassettes), "--out", str(out), timeout=1800)
        assert ran.code != 2, ran
        result = read_results(out)
        assert result.card.agent.startswith("claude-code@") and result.vector == [(TASK, "fail")]
        task = result.tasks[0]
        assert task.stop_reason == "model_stopped" and task.counters.steps == 1, task
        shown = endstate("cassette", "show", str(cassettes / f"{TASK}.cassette"))
        assert shown.code == 0 and "1 interaction, complete" in shown.out, shown
        turns = re.findall(r"^#\d+ (\w+) turn \d+\s+([0-9a-f]{16})\s+POST (\S+) -> 200$", shown.out, re.M)
        assert [(channel, path) for channel, _, path in turns] == [("agent", f"/scripted/null/{TASK}/v1/messages")]
        assert '"device_id\\":\\"sandbox\\"' in shown.out and "Today's date is 2026-01-01." in shown.out
        sent = load(cassettes / f"{TASK}.cassette").interactions[0].request.body
        assert b"OS Version: Linux sandbox" in sent
        # Its one side request: a HEAD of the base URL (a reachability check), refused in place.
        transcript = (out / "transcripts").glob("*.json")
        assert re.findall(r"\[proxy refused ([^\]]+)\]", next(transcript).read_text()) == ["HEAD /v1"]
        hashes.append(turns[0][1])
    assert hashes[0] == hashes[1]


# -- the committed control arms, replayed: a sample here, the whole sets in bench/foreign_agent_replay.py

def _tasks(ids: list[str]) -> list[str]:
    return [arg for task in ids for arg in ("--task", task)]


def test_the_committed_recordings_cover_the_core_tasks_with_this_agent_file():
    core = sorted(t.id for t in load_suite(TASKS)[0] if t.manifest.category.value in ("bugfix", "feature", "refactor"))
    agent = find_agent(AGENT)
    assert agent is not None and len(core) == 12
    for folder in (REFERENCE, NULL):
        assert sorted(p.stem for p in folder.glob("*.cassette")) == core, folder
        # A changed agent file is a different agent: its recordings must be made again.
        assert {load(p).header.agent for p in folder.glob("*.cassette")} == {agent.id}, folder
    assert read_results(REFERENCE_LIVE).vector == [(task, "pass") for task in core]
    ran = endstate("cassette", "diff", str(REFERENCE / f"{core[0]}.cassette"), str(NULL / f"{core[0]}.cassette"))
    assert ran.code == 1 and "first difference at agent turn 0" in ran.out, ran


@pytest.mark.docker
@pytest.mark.slow
def test_a_sample_of_the_control_arms_replays_offline_to_the_live_end_states(tmp_path):
    ran = endstate("eval", "--agent", AGENT, "--replay", str(REFERENCE), *_tasks(SAMPLE), "-j", "2",
                   "--expect", "pass", "--out", str(tmp_path / "reference"), timeout=3600)
    assert ran.code == 0, ran
    replayed, live = read_results(tmp_path / "reference"), read_results(REFERENCE_LIVE)
    assert replayed.card.agent == live.card.agent and replayed.vector == [(task, "pass") for task in SAMPLE]
    before = {t.task_id: t for t in live.tasks}
    for task in replayed.tasks:  # the same end state and the same counted run as live
        assert task.unplayed == 0 and task.counters.steps > 1, task.task_id
        assert (task.tree_hash, task.stop_reason, task.counters) == (
            before[task.task_id].tree_hash, before[task.task_id].stop_reason, before[task.task_id].counters), task.task_id
    ran = endstate("eval", "--agent", AGENT, "--replay", str(NULL), *_tasks(SAMPLE), "-j", "2",
                   "--out", str(tmp_path / "null"), timeout=3600)
    null = read_results(tmp_path / "null")
    assert null.vector == [(task, "fail") for task in SAMPLE], ran
    assert all(t.unplayed == 0 and t.counters.steps == 1 and t.stop_reason == "model_stopped" for t in null.tasks), null.tasks
