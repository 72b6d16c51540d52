"""Faults of the machinery under a run are retried, not reported as results: a killed
agent worker is run again from scratch and the run ends with the undisturbed vector."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import docker
import pytest
from cli_runner import run_endstate, start_endstate
from e2e_helpers import CASSETTES, DISTURBED, TASKS, fingerprint

pytestmark = [pytest.mark.docker, pytest.mark.alone]

TASK_IDS = [DISTURBED[0], DISTURBED[2]]
RUN = ["eval", "--suite", str(TASKS), "--model", "scripted/reference", "--replay", str(CASSETTES / "scripted-reference"),
       "-j", "1", *[a for t in TASK_IDS for a in ("--task", t)]]


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _worker_of(run_pid: int) -> int | None:
    """An agent worker of the run: a child of its fork server (the child running `forkserver`)."""
    for child in _children(run_pid):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"forkserver" in cmdline:
            workers = _children(child)
            if workers:
                return workers[0]
    return None


def test_a_killed_agent_worker_is_run_again_and_the_run_ends_undisturbed(tmp_path, undisturbed):
    out = tmp_path / "disturbed"
    proc = start_endstate(*RUN, "--out", str(out))
    killed = None
    deadline = time.monotonic() + 300
    while killed is None and time.monotonic() < deadline and proc.poll() is None:
        worker = _worker_of(proc.pid)
        if worker is not None:
            time.sleep(0.3)  # let it get going: connected to its sandbox, the replay open
            try:
                os.kill(worker, signal.SIGKILL)  # what the OOM killer does to a worker
                killed = worker
            except ProcessLookupError:
                pass
        time.sleep(0.02)
    stdout, stderr = proc.communicate(timeout=600)
    assert killed is not None, "no worker was seen to kill"
    assert proc.returncode == 0, f"{stdout}\n{stderr}"
    assert fingerprint(out) == [row for row in undisturbed if row[0] in TASK_IDS]
    tasks = json.loads((out / "results.json").read_text())["tasks"]
    assert sorted(t["infra_retries"] for t in tasks) == [0, 1]
    assert "1 rerun(s) from scratch" in stdout
    client = docker.from_env()
    assert client.api.containers(all=True, filters={"label": f"endstate.owner.pid={proc.pid}"}) == []
    client.close()


@pytest.fixture
def small_disk(tmp_path):
    """A 64 MiB file system of the test's own, to fill."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a file system")
    where = tmp_path / "scratch"
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(folder: Path) -> Path:
    filler = folder / "filler"
    with open(filler, "wb") as out:
        try:
            while True:
                out.write(bytes(1 << 20))
                out.flush()
        except OSError:
            pass
    return filler


def test_a_full_scratch_disk_is_a_fault_of_the_machinery_and_nothing_is_lost(tmp_path, small_disk, undisturbed):
    out = small_disk / "run"
    proc = start_endstate(*RUN, "--out", str(out))
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None and _worker_of(proc.pid) is None:
        time.sleep(0.02)
    filler = _fill(small_disk)  # the run's folder is full while its first agent works
    time.sleep(4)
    filler.unlink()
    stdout, stderr = proc.communicate(timeout=600)
    first = json.loads((out / "results.json").read_text())["tasks"]
    assert not [t for t in first if t["reason"].startswith("harness bug")], first
    if proc.returncode != 0:  # what the retries did not finish, --resume does
        resumed = run_endstate(*RUN, "--out", str(out), "--resume")
        assert resumed.code == 0, resumed
    else:
        assert "rerun(s) from scratch" in stdout, stdout
    assert fingerprint(out) == [row for row in undisturbed if row[0] in TASK_IDS]
    client = docker.from_env()
    assert client.api.containers(all=True, filters={"label": f"endstate.owner.pid={proc.pid}"}) == []
    client.close()
