"""The engine restarted under a running replay: no task reads as a model failure or a
harness bug; the tasks it cut short are rerun once it answers, and the run ends with the
vector and tree hashes of an undisturbed run, no container left.

The engine restarted is the test's own (`own_engine`), never the one other work uses."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest
from cli_runner import start_endstate
from e2e_helpers import CASSETTES, DISTURBED, TASKS, fingerprint
from own_engine import OwnEngine

pytestmark = [pytest.mark.docker, pytest.mark.alone]

TASK_IDS = DISTURBED
RUN = ["eval", "--suite", str(TASKS), "--model", "scripted/reference", "--replay", str(CASSETTES / "scripted-reference"),
       "-j", "2", *[a for t in TASK_IDS for a in ("--task", t)]]


@pytest.fixture(scope="module")
def engine():
    if os.geteuid() != 0 or shutil.which("dockerd") is None:
        pytest.skip("needs root and dockerd to start an engine of its own")
    own = OwnEngine()
    try:
        own.start()
        own.load_image()
        yield own
    finally:
        own.remove()


def _results(out: Path) -> list[dict]:
    path = out / "results.json"
    return json.loads(path.read_text())["tasks"] if path.exists() else []


def test_an_engine_restarted_mid_run_ends_in_the_undisturbed_vector(engine, tmp_path, undisturbed):
    env = {"DOCKER_HOST": engine.url}

    out = tmp_path / "restarted"
    proc = start_endstate(*RUN, "--out", str(out), env=env)
    # Restart once the run is under way: containers exist, and no task has finished yet.
    deadline = time.monotonic() + 300
    client = engine.client()
    while time.monotonic() < deadline and proc.poll() is None and not client.api.containers():
        time.sleep(0.1)
    client.close()
    time.sleep(2)
    assert proc.poll() is None and len(_results(out)) < len(TASK_IDS)
    engine.restart()
    stdout, stderr = proc.communicate(timeout=900)
    assert proc.returncode == 0, f"{stdout}\n{stderr}"
    tasks = _results(out)
    assert not [t for t in tasks if t["outcome"] != "pass"], tasks
    assert fingerprint(out) == undisturbed
    assert sum(t["infra_retries"] for t in tasks) >= 1
    assert "harness bug" not in stdout + stderr
    client = engine.client()
    assert client.api.containers(all=True) == []
    client.close()
