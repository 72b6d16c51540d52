"""The proxy under a replay session: a recorded request is answered from the cassette, with
no server; one the recording does not hold is a ReplayDivergence that stops the agent."""

from __future__ import annotations

import json
from pathlib import Path

from endstate.agents import find_agent
from endstate.agents._proxy import ModelProxy
from endstate.cassettes import CassetteJob, load, open_session

ROOT = Path(__file__).resolve().parents[2]
CASSETTE = ROOT / "cassettes" / "mini-swe-agent-scripted-reference" / "bugfix-lru-eviction.cassette"


def test_replay_answers_recorded_requests_and_stops_at_the_first_new_one(tmp_path):
    spec = find_agent("mini-swe-agent")
    recording = load(CASSETTE)
    first = recording.interactions[0]
    job = CassetteJob(mode="replay", path=str(CASSETTE), header={"agent": spec.id})
    stopped = []
    with open_session(job, task_id="bugfix-lru-eviction", state_dir=tmp_path) as tape:
        proxy = ModelProxy(spec, "http://127.0.0.1:9/scripted/reference/bugfix-lru-eviction/v1", api_key=None,
                           timeout_s=5, on_divergence=stopped.append)
        # what the agent sent, re-normalised by the proxy, hashes as recorded (the rewrites are idempotent)
        status, _, _, answer = proxy._answer({"method": "POST", "path": "/v1/chat/completions", "headers": []},
                                             first.request.body)
        assert status == 200 and answer == first.response.body and stopped == []
        changed = json.loads(recording.interactions[1].request.body)
        changed["messages"][-1]["content"] += "\nsomething the recording never saw"
        status, _, _, answer = proxy._answer({"method": "POST", "path": "/v1/chat/completions", "headers": []},
                                             json.dumps(changed).encode())
        assert status == 404 and b"replay diverged" in answer
        proxy.close()
    assert len(stopped) == 1 and proxy.divergence is stopped[0]
    assert tape.divergence and "bugfix-lru-eviction" in tape.divergence and "agent turn 1" in tape.divergence
    assert "closest recorded request: #1" in tape.divergence and "something the recording never saw" in tape.divergence
    assert proxy.turns == 1


def test_the_allowlist_probe_passes_with_the_guard_and_fails_without_it(tmp_path):
    """The mutation check's probe: a hostile agent's requests, then the recorded turns, into the proxy."""
    from endstate.agents import probe_proxy

    kept = probe_proxy("mini-swe-agent", CASSETTE, "bugfix-lru-eviction", tmp_path / "on", allowlist=True)
    assert kept == ("pass", "")
    outcome, reason = probe_proxy("mini-swe-agent", CASSETTE, "bugfix-lru-eviction", tmp_path / "off",
                                  allowlist=False)
    assert outcome == "fail" and "got past the proxy's allowlist" in reason and "POST /v1/files" in reason
    assert "has no recorded answer" in reason  # on replay: it left the proxy
