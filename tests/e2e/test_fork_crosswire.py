"""A fork across providers, for endstate's own loop: a recording made against an OpenAI-compatible
stand-in (the scripted server's Chat Completions, which an OpenAI-compatible adapter sends `content: ""`)
forks at turn 2 onto the Messages API and the Responses API scripted arms, passes as those arms pass,
and the fork's cassette replays strictly to the same end state."""

from __future__ import annotations

import pytest
from cli_runner import run_endstate
from e2e_helpers import TASKS, fingerprint

from endstate.cassettes import load
from endstate.models import ScriptedServer

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TASK = "bugfix-lru-eviction"


def test_a_chat_completions_recording_forks_onto_the_messages_and_responses_arms(tmp_path):
    with ScriptedServer(TASKS) as server:
        recorded = run_endstate("record", "--model", "openai-compatible/reference", "--base-url",
                                server.base_url_for("reference", TASK), "--task", TASK,
                                "--cassettes", str(tmp_path / "parent"), "--out", str(tmp_path / "recorded"))
    assert recorded.code == 0, recorded
    for arm in ("scripted-anthropic", "scripted-responses"):
        out = tmp_path / arm
        forked = run_endstate("eval", "--replay", str(tmp_path / "parent"), "--fork-at", "2", "--model",
                              f"{arm}/reference", "--task", TASK, "--out", str(out))
        assert forked.code == 0, forked
        assert f"{TASK}: forked: turns 0..1 replayed, live from turn 2" in forked.err, forked
        assert [o for _, o, _ in fingerprint(out)] == ["pass"]
        header = load(out / "cassettes" / f"{TASK}.cassette").header
        assert (header.model, header.fork_at, len(header.parent)) == (f"{arm}/reference", 2, 64)
    replayed = run_endstate("eval", "--replay", str(tmp_path / "scripted-anthropic" / "cassettes"), "--task", TASK,
                            "--out", str(tmp_path / "replayed"), env={"ANTHROPIC_API_KEY": ""})
    assert replayed.code == 0, replayed
    assert fingerprint(tmp_path / "replayed") == fingerprint(tmp_path / "scripted-anthropic")
