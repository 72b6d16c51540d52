"""A replay needs the cassette alone: a run recorded with `anthropic/X --base-url URL` (a gateway,
a proxy, a compatible server; here the scripted server's Messages API stands in) replays with
no key, no --base-url and no --model, in a network namespace with no route at all."""

from __future__ import annotations

import subprocess

import pytest
from cli_runner import run_endstate
from e2e_helpers import TASKS, fingerprint

from endstate.models import ScriptedServer

pytestmark = [pytest.mark.docker]

TASK = "bugfix-lru-eviction"


def _no_network() -> list[str]:
    """`unshare -n` where this process may make a network namespace (root), else nothing."""
    try:
        subprocess.run(["unshare", "-n", "true"], check=True, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return []
    return ["unshare", "-n"]


def test_a_recording_made_through_a_base_url_replays_offline_with_no_key_and_no_flags(tmp_path):
    with ScriptedServer(TASKS) as server:
        base_url = server.base_url_for("reference", TASK, wire="messages")  # the API root, as for a gateway
        recorded = run_endstate("record", "--model", "anthropic/reference", "--base-url", base_url, "--task", TASK,
                                "--cassettes", str(tmp_path / "cassettes"), "--out", str(tmp_path / "recorded"),
                                env={"ANTHROPIC_API_KEY": "sk-ant-stand-in-key"})
    assert recorded.code == 0, recorded
    offline = _no_network()
    ran = run_endstate("eval", "--replay", str(tmp_path / "cassettes"), "--task", TASK, "--out",
                       str(tmp_path / "replayed"), env={"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""},
                       cwd=TASKS.parent, wrap=lambda argv: [*offline, *argv])
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert "anthropic/reference (replay, strict)" in ran.stdout, ran.stdout
    assert fingerprint(tmp_path / "replayed") == fingerprint(tmp_path / "recorded")
    assert [o for _, o, _ in fingerprint(tmp_path / "replayed")] == ["pass"]
