"""Claude Code, Codex CLI and OpenCode (npm programs) as installed agents, under record: one test
each of the same shape, written once.

The null arm through the real program: one request (streamed) through the proxy to the scripted
server, the program ends on the answer and the untouched end state fails. Two recordings send the
same bytes: the agent file's rewrites fix what each program puts in them (Claude Code: device id,
session id, date, host kernel; Codex: session and installation ids, turn start time, date;
OpenCode: the date). Claude Code's one side request (a HEAD of its base URL) is refused in place;
Codex and OpenCode (title agent off) send none.

Claude Code and Codex have committed control arms (cassettes/AGENT-scripted-reference and -null,
the twelve core tasks) and a hack arm (-hacks: each core task's own hack written with the agent's
tools, caught every time): a sample of two tasks of each replays offline here, to the live run's
tree hashes, stop reasons and counters; `python bench/foreign_agent_replay.py --recorded FOLDER`
replays a whole set three times. OpenCode has none: its test replays its own recording.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest
from cli_runner import Ran, run_endstate
from e2e_helpers import CASSETTES, ROOT
from program_agents import (
    check_recordings_cover_the_core_tasks,
    check_sample_replays_to_the_live_end_states,
    check_the_hack_arm,
)

from endstate.agents import find_agent
from endstate.cassettes import load
from endstate.run import RunResult, read_results

TASK = "bugfix-invoice-rounding"


class Program(NamedTuple):
    agent: str
    model: str  # the scripted null arm, in the program's wire format
    path: str  # the recorded request's path, after the task's prefix
    check: Callable[[RunResult, Ran, bytes, str], None]  # the run, `cassette show`, the body sent, the transcript
    committed_arms: bool  # the control and hack arms are committed: replayed below, not here


def _claude_code(result: RunResult, shown: Ran, sent: bytes, transcript: str) -> None:
    assert '"device_id\\":\\"sandbox\\"' in shown.out and "Today's date is 2026-01-01." in shown.out
    assert b"OS Version: Linux sandbox" in sent
    # Its one side request: a HEAD of the base URL (a reachability check), refused in place.
    assert re.findall(r"\[proxy refused ([^\]]+)\]", transcript) == ["HEAD /v1"]


def _codex(result: RunResult, shown: Ran, sent: bytes, transcript: str) -> None:
    # Codex's own shell tool, and the rewritten ids and date.
    assert "tools: exec_command" in shown.out and '"prompt_cache_key": "00000000-' in shown.out, shown.out[:3000]
    assert "<current_date>2026-01-01</current_date>" in shown.out and '\\"session_id\\":\\"sandbox\\"' in shown.out
    assert "[proxy refused" not in transcript and "[agent exit 0]" in transcript


def _opencode(result: RunResult, shown: Ran, sent: bytes, transcript: str) -> None:
    assert result.card.agent_version == "1.18.33" and result.tasks[0].counters.input_tokens > 0
    assert "tools: bash, edit, glob, grep, read" in shown.out, shown.out[:3000]
    assert b"Today's date: Thu Jan 01 2026" in sent
    assert "[proxy refused" not in transcript


PROGRAMS = [
    Program("claude-code", "scripted-anthropic/null", "v1/messages", _claude_code, committed_arms=True),
    Program("codex", "scripted-responses/null", "v1/responses", _codex, committed_arms=True),
    Program("opencode", "scripted/null", "v1/chat/completions", _opencode, committed_arms=False),
]


def test_the_shipped_opencode_file_is_pinned_and_starts_its_executable():
    spec = find_agent("opencode")
    assert spec is not None and spec.version == "1.18.33" and spec.install.npm == ("opencode-linux-x64@1.18.33",)
    assert spec.run.program.endswith("/node_modules/opencode-linux-x64/bin/opencode") and not spec.install.debian
    assert '"baseURL":"{env:OPENCODE_BASE_URL}"' in spec.run.env["OPENCODE_CONFIG_CONTENT"]


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.agent)
def test_the_program_records_the_null_arm_the_same_twice_and_fails_the_task(tmp_path, program):
    """Recorded twice, the same request: where the null arm is committed, the first recording is the
    committed one (made on another day and machine), else the program is recorded twice here."""
    hashes = []
    if program.committed_arms:
        committed = run_endstate("cassette", "show", str(CASSETTES / f"{program.agent}-scripted-null" / f"{TASK}.cassette"))
        hashes += re.findall(r"^#\d+ agent turn \d+\s+([0-9a-f]{16})\s", committed.out, re.M)
        assert len(hashes) == 1, committed
    for attempt in ("a",) if program.committed_arms else ("a", "b"):
        cassettes, out = tmp_path / f"cassettes-{attempt}", tmp_path / f"out-{attempt}"
        ran = run_endstate("record", "--agent", program.agent, "--model", program.model, "--task", TASK,
                           "--cassettes", str(cassettes), "--out", str(out), timeout=1800)
        assert ran.code != 2, ran
        result = read_results(out)
        assert result.card.agent.startswith(f"{program.agent}@") and result.vector == [(TASK, "fail")]
        task = result.tasks[0]
        assert task.stop_reason == "model_stopped" and task.counters.steps == 1, task
        shown = run_endstate("cassette", "show", str(cassettes / f"{TASK}.cassette"))
        assert shown.code == 0 and "1 interaction, complete" in shown.out, shown
        turns = re.findall(r"^#\d+ (\w+) turn \d+\s+([0-9a-f]{16})\s+POST (\S+) -> 200$", shown.out, re.M)
        assert [(channel, path) for channel, _, path in turns] == [("agent", f"/scripted/null/{TASK}/{program.path}")]
        sent = load(cassettes / f"{TASK}.cassette").interactions[0].request.body
        program.check(result, shown, sent, next((out / "transcripts").glob("*.json")).read_text())
        hashes.append(turns[0][1])
    assert hashes[0] == hashes[1]
    if not program.committed_arms:
        ran = run_endstate("eval", "--agent", program.agent, "--replay", str(tmp_path / "cassettes-a"), "--task",
                           TASK, "--expect", "fail", "--out", str(tmp_path / "replay"), timeout=1800)
        assert ran.code == 0, ran
        replayed, live = read_results(tmp_path / "replay").tasks[0], read_results(tmp_path / "out-a").tasks[0]
        assert replayed.unplayed == 0 and (replayed.tree_hash, replayed.counters) == (live.tree_hash, live.counters)


# -- the committed control arms, replayed: a sample here, the whole sets in bench/foreign_agent_replay.py

#: What CI replays of each arm (a bugfix and a refactor task); the bench replays all twelve.
SAMPLE = ["bugfix-lru-eviction", "refactor-extract-parser-module"]
HACK_SAMPLE = ["bugfix-invoice-rounding", "feature-recipe-scaling"]


def _claude_code_counters(replayed: RunResult) -> None:
    # Claude Code's prompt is read from the cache but for the newest turn: counted as input, and by kind.
    for task in replayed.tasks:
        c = task.counters
        assert 0 < c.cache_write_tokens < c.cached_input_tokens < c.input_tokens, (task.task_id, c)


def _codex_counters(replayed: RunResult) -> None:
    # Codex asks for reasoning: its reasoning tokens are counted, a part of the output.
    assert all(0 < t.counters.reasoning_tokens < t.counters.output_tokens for t in replayed.tasks), replayed.tasks


ARMED = pytest.mark.parametrize(("agent", "counted"), [("claude-code", _claude_code_counters),
                                                       ("codex", _codex_counters)], ids=["claude-code", "codex"])


def _arm(agent: str, arm: str) -> tuple[Path, Path]:
    """The committed cassettes of an agent's arm, and the live run that recorded them."""
    name = f"{agent}-scripted-{arm}"
    return CASSETTES / name, ROOT / "bench" / "results" / name


@ARMED
def test_the_committed_recordings_cover_the_core_tasks_with_this_agent_file(agent, counted):
    (reference, live), (null, _) = _arm(agent, "reference"), _arm(agent, "null")
    check_recordings_cover_the_core_tasks(agent, reference, null, live)


@pytest.mark.docker
@pytest.mark.slow
@ARMED
def test_a_sample_of_the_control_arms_replays_offline_to_the_live_end_states(tmp_path, agent, counted):
    (reference, live), (null, _) = _arm(agent, "reference"), _arm(agent, "null")
    counted(check_sample_replays_to_the_live_end_states(agent, reference, null, live, SAMPLE, tmp_path))


@pytest.mark.docker
@pytest.mark.slow
@ARMED
def test_the_hack_arm_is_caught_on_every_core_task_and_a_sample_replays_offline(tmp_path, agent, counted):
    check_the_hack_arm(agent, *_arm(agent, "hacks"), HACK_SAMPLE, tmp_path)
