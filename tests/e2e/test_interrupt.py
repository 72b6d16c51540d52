"""Ctrl-C or SIGTERM in the middle of a run keeps finished results and removes every sandbox."""

from __future__ import annotations

import json
import os
import signal
import time

import docker
import pytest
from cli_runner import start_endstate
from e2e_helpers import TASKS, wait_for_a_finished_task

pytestmark = [pytest.mark.docker, pytest.mark.alone]


def _sandboxes(client, owner: int) -> set[str]:
    """The containers a process made (other runs may share the engine)."""
    return {c["Id"] for c in client.api.containers(all=True, filters={"label": f"endstate.owner.pid={owner}"})}


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_stopping_keeps_finished_results_and_removes_containers(tmp_path, stop):
    client = docker.from_env()
    tasks = ["bugfix-lru-eviction", "compaction-rename-across-modules", "refactor-dedupe-validators"]
    args = [a for t in tasks for a in ("--task", t)]
    proc = start_endstate("eval", "--model", "scripted/reference", "--suite", str(TASKS), *args, "-j", "1",
                          "--out", str(tmp_path), new_session=True)
    results = tmp_path / "results.json"
    wait_for_a_finished_task(tmp_path, proc)
    time.sleep(1.0)  # let the second task get going
    if stop == signal.SIGINT:
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
    else:
        proc.send_signal(signal.SIGTERM)  # what a cancelled CI job does to the command it started
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err and "Traceback" not in err
    finished = json.loads(results.read_text())["tasks"]
    assert finished and finished[0]["task_id"] == "bugfix-lru-eviction" and finished[0]["outcome"] == "pass"
    assert len(finished) < len(tasks)
    time.sleep(0.5)
    assert _sandboxes(client, proc.pid) == set()
    client.close()
