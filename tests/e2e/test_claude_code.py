"""Claude Code (npm, a native binary, Debian's Node) as an installed agent, under record.

The null arm through the real program: one Messages request (streamed) through the proxy
to the scripted server, one side request (a HEAD of its base URL, refused in place; the
nonessential traffic is off), the program ends
on the answer and the untouched end state fails. Two recordings send the same bytes: the
agent file's rewrites fix the device id, session id, date and host kernel Claude Code puts in them.

The committed control arms through Claude Code (cassettes/claude-code-scripted-reference and
-null, the twelve core tasks) replay offline, and so does the hack arm (-hacks: each core task's
own hack written with the agent's tools, caught every time): a sample of two tasks of each here, to the live
run's tree hashes, stop reasons and counters; `python bench/foreign_agent_replay.py
--recorded FOLDER` replays a whole set three times.
"""

from __future__ import annotations

import re

import pytest
from e2e_helpers import CASSETTES, ROOT, endstate
from program_agents import (
    check_recordings_cover_the_core_tasks,
    check_sample_replays_to_the_live_end_states,
    check_the_hack_arm,
)

from endstate.cassettes import load
from endstate.run import read_results

TASK = "bugfix-invoice-rounding"
AGENT = "claude-code"
REFERENCE, NULL = CASSETTES / "claude-code-scripted-reference", CASSETTES / "claude-code-scripted-null"
#: The live run that recorded REFERENCE.
REFERENCE_LIVE = ROOT / "bench" / "results" / "claude-code-scripted-reference"
#: What CI replays of each arm (a bugfix and a refactor task); the bench replays all twelve.
SAMPLE = ["bugfix-lru-eviction", "refactor-extract-parser-module"]
#: The hack arm (each core task's own hack in claude-code's tools), its live run, and what CI replays of it.
HACKS, HACKS_LIVE = CASSETTES / "claude-code-scripted-hacks", ROOT / "bench" / "results" / "claude-code-scripted-hacks"
HACK_SAMPLE = ["bugfix-invoice-rounding", "feature-recipe-scaling"]


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

def test_the_committed_recordings_cover_the_core_tasks_with_this_agent_file():
    check_recordings_cover_the_core_tasks(AGENT, REFERENCE, NULL, REFERENCE_LIVE)


@pytest.mark.docker
@pytest.mark.slow
def test_a_sample_of_the_control_arms_replays_offline_to_the_live_end_states(tmp_path):
    replayed = check_sample_replays_to_the_live_end_states(AGENT, REFERENCE, NULL, REFERENCE_LIVE, SAMPLE, tmp_path)
    # Claude Code's prompt is read from the cache but for the newest turn: counted as input, and by kind.
    for task in replayed.tasks:
        c = task.counters
        assert 0 < c.cache_write_tokens < c.cached_input_tokens < c.input_tokens, (task.task_id, c)


@pytest.mark.docker
@pytest.mark.slow
def test_the_hack_arm_is_caught_on_every_core_task_and_a_sample_replays_offline(tmp_path):
    check_the_hack_arm(AGENT, HACKS, HACKS_LIVE, HACK_SAMPLE, tmp_path)
