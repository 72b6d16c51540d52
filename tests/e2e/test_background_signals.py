"""A run started in the background by a script stops on SIGINT as on SIGTERM: results kept, sandboxes removed.

A non-interactive shell starts background commands with SIGINT ignored, and a
process inherits that; endstate restores the handler at start.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import docker
import pytest
from cli_runner import argv
from e2e_helpers import CASSETTES, ROOT, TASKS, wait_for_a_finished_task

pytestmark = [pytest.mark.docker, pytest.mark.alone]

TASK_IDS = ["bugfix-invoice-rounding", "bugfix-lru-eviction", "feature-recipe-scaling"]


def test_a_script_starts_background_commands_with_sigint_ignored():
    """The premise: without endstate's own handler, SIGINT would do nothing."""
    probe = "import signal; print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"
    ran = subprocess.run(["bash", "-c", '"$@" & wait', "bash", sys.executable, "-c", probe],
                         capture_output=True, text=True, timeout=30)
    assert ran.stdout.strip() == "True"


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
@pytest.mark.parametrize("mode", ["replay", "record"])
def test_a_background_run_stops_cleanly_on_either_signal(tmp_path, stop, mode):
    out = tmp_path / "out"
    source = ["--replay", str(CASSETTES / "scripted-reference")] if mode == "replay" else [
        "--cassettes", str(tmp_path / "cassettes")]
    command = argv("eval" if mode == "replay" else "record", "--suite", str(TASKS), "--model", "scripted/reference",
                   *source, *[a for t in TASK_IDS for a in ("--task", t)], "--out", str(out))
    script = 'exec 3>&1; "$@" >"$OUT_LOG" 2>&1 & echo $! >&3; wait'
    shell = subprocess.Popen(["bash", "-c", script, "bash", *command], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "OUT_LOG": str(tmp_path / "log")})
    pid = int(shell.stdout.readline())

    results = out / "results.json"
    wait_for_a_finished_task(out, shell)
    os.kill(pid, stop)
    shell.wait(timeout=120)
    log = (tmp_path / "log").read_text()
    assert "interrupted" in log and "Traceback" not in log, log
    finished = json.loads(results.read_text())["tasks"]
    assert 1 <= len(finished) < len(TASK_IDS)
    client = docker.from_env()
    time.sleep(0.5)
    assert client.api.containers(all=True, filters={"label": f"endstate.owner.pid={pid}"}) == []
    client.close()
