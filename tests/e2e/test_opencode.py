"""OpenCode (npm, its linux-x64 executable) as an installed agent, under record.

The null arm through the real program: one Chat Completions request (streamed) through the
proxy to the scripted server, via the OpenAI-compatible provider its configuration names;
no side request (its title agent is off); OpenCode ends on the answer and the untouched end
state fails. Two recordings send the same bytes (the agent file's one rewrite fixes the date),
so the recording replays offline to the same end state.
"""

from __future__ import annotations

import re

import pytest
from e2e_helpers import endstate

from endstate.agents import find_agent
from endstate.cassettes import load
from endstate.run import read_results

TASK = "bugfix-invoice-rounding"


def test_the_shipped_opencode_file_is_pinned_and_starts_its_executable():
    spec = find_agent("opencode")
    assert spec is not None and spec.version == "1.18.33" and spec.install.npm == ("opencode-linux-x64@1.18.33",)
    assert spec.run.program.endswith("/node_modules/opencode-linux-x64/bin/opencode") and not spec.install.debian
    assert '"baseURL":"{env:OPENCODE_BASE_URL}"' in spec.run.env["OPENCODE_CONFIG_CONTENT"]


@pytest.mark.docker
@pytest.mark.slow
def test_opencode_records_the_null_arm_the_same_twice_and_replays_it(tmp_path):
    hashes = []
    for attempt in ("a", "b"):
        cassettes, out = tmp_path / f"cassettes-{attempt}", tmp_path / f"out-{attempt}"
        ran = endstate("record", "--agent", "opencode", "--model", "scripted/null", "--task", TASK,
                       "--cassettes", str(cassettes), "--out", str(out), timeout=1800)
        assert ran.code != 2, ran
        result = read_results(out)
        assert result.card.agent.startswith("opencode@") and result.card.agent_version == "1.18.33"
        assert result.vector == [(TASK, "fail")]
        task = result.tasks[0]
        assert task.stop_reason == "model_stopped" and task.counters.steps == 1 and task.counters.input_tokens > 0
        shown = endstate("cassette", "show", str(cassettes / f"{TASK}.cassette"))
        assert shown.code == 0 and "1 interaction, complete" in shown.out, shown
        turns = re.findall(r"^#\d+ (\w+) turn \d+\s+([0-9a-f]{16})\s+POST (\S+) -> 200$", shown.out, re.M)
        assert [(c, p) for c, _, p in turns] == [("agent", f"/scripted/null/{TASK}/v1/chat/completions")]
        assert "tools: bash, edit, glob, grep, read" in shown.out, shown.out[:3000]
        sent = load(cassettes / f"{TASK}.cassette").interactions[0].request.body
        assert b"Today's date: Thu Jan 01 2026" in sent
        transcript = next((out / "transcripts").glob("*.json")).read_text()
        assert "[proxy refused" not in transcript
        hashes.append(turns[0][1])
    assert hashes[0] == hashes[1]
    ran = endstate("eval", "--agent", "opencode", "--replay", str(tmp_path / "cassettes-a"), "--task", TASK,
                   "--expect", "fail", "--out", str(tmp_path / "replay"), timeout=1800)
    assert ran.code == 0, ran
    replayed, live = read_results(tmp_path / "replay").tasks[0], read_results(tmp_path / "out-a").tasks[0]
    assert replayed.unplayed == 0 and (replayed.tree_hash, replayed.counters) == (live.tree_hash, live.counters)
