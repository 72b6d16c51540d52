"""A run killed with SIGKILL mid-suite is finished by `--resume`, as if it had never been killed."""

from __future__ import annotations

import json
import os
import signal
import time

import docker
import pytest
from cli_runner import run_endstate, start_endstate
from e2e_helpers import CASSETTES, DISTURBED, TASKS, fingerprint

pytestmark = [pytest.mark.docker, pytest.mark.alone]

TASK_IDS = DISTURBED
RUN = ["eval", "--suite", str(TASKS), "--model", "scripted/reference", "--replay", str(CASSETTES / "scripted-reference"),
       "-j", "2", *[a for t in TASK_IDS for a in ("--task", t)]]


def _finished(out) -> list[dict]:
    path = out / "results.json"
    return json.loads(path.read_text())["tasks"] if path.exists() else []


def test_a_sigkilled_run_is_resumed_to_the_uninterrupted_result(tmp_path, undisturbed):
    out = tmp_path / "killed"
    proc = start_endstate(*RUN, "--out", str(out), capture=False, new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None and not _finished(out):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)  # no handler runs: what the OOM killer or a closed laptop does
    proc.wait()
    left = _finished(out)
    assert 1 <= len(left) < len(TASK_IDS), "the kill should land after the first result and before the last"

    client = docker.from_env()
    owned = {"label": f"endstate.owner.pid={proc.pid}"}
    # The killed run's containers end by themselves: nothing of it runs on.
    # The low-level list: the high-level one inspects each container it lists, and one whose
    # removal the engine was finishing when the run died is gone by then (404).
    stop_by = time.monotonic() + 20
    while client.api.containers(filters=owned) and time.monotonic() < stop_by:
        time.sleep(0.2)
    assert client.api.containers(filters=owned) == []

    resumed = run_endstate(*RUN, "--out", str(out), "--resume")
    assert resumed.code == 0, resumed
    assert fingerprint(out) == undisturbed
    kept = {t["task_id"]: t for t in _finished(out)}
    for task in left:  # finished tasks were kept, not run again
        assert kept[task["task_id"]]["wall_s"] == task["wall_s"]
    for task_id in TASK_IDS:
        assert json.loads((out / "transcripts" / f"{task_id}.json").read_text())
    # Every container of the killed run is gone, stopped ones included.
    assert client.api.containers(all=True, filters=owned) == []
    client.close()


def test_resuming_with_other_settings_or_tasks_is_refused_naming_the_difference(tmp_path):
    out = tmp_path / "run"
    first = run_endstate(*RUN[:-2], "--out", str(out))  # the first three tasks
    assert first.code == 0, first
    before = (out / "results.json").read_bytes()

    other_temperature = run_endstate(*RUN[:-2], "--out", str(out), "--resume", "--temperature", "0.5")
    assert other_temperature.code == 2, other_temperature
    assert "temperature was 0.0, now 0.5" in other_temperature.err and "Traceback" not in other_temperature.err

    other_tasks = run_endstate(*RUN, "--out", str(out), "--resume")
    assert other_tasks.code == 2, other_tasks
    assert "task_pack_hash was" in other_tasks.err

    nothing = run_endstate(*RUN, "--out", str(tmp_path / "empty"), "--resume")
    assert nothing.code == 2 and "holds no run" in nothing.err, nothing
    assert (out / "results.json").read_bytes() == before  # a refused resume touches nothing

    again = run_endstate(*RUN[:-2], "--out", str(out), "--resume")  # same settings, all finished: nothing to do
    assert again.code == 0, again
    assert (out / "results.json").read_bytes() == before


def test_a_sigkilled_recording_is_resumed_into_cassettes_that_replay(tmp_path):
    cassettes, out = tmp_path / "cassettes", tmp_path / "out"
    record = ["record", "--suite", str(TASKS), "--model", "scripted/reference", "-j", "2",
              *[a for t in TASK_IDS[:3] for a in ("--task", t)], "--cassettes", str(cassettes), "--out", str(out)]
    proc = start_endstate(*record, capture=False, new_session=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None and not _finished(out):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 1 <= len(_finished(out)) < 3
    kept = {t["task_id"]: (cassettes / f"{t['task_id']}.cassette").read_bytes() for t in _finished(out)}

    resumed = run_endstate(*record, "--resume")
    assert resumed.code == 0, resumed
    assert [t["outcome"] for t in _finished(out)] == ["pass"] * 3
    assert sorted(p.name for p in cassettes.iterdir()) == [f"{t}.cassette" for t in TASK_IDS[:3]]
    for task_id, recording in kept.items():  # a finished task's recording is kept, not made again
        assert (cassettes / f"{task_id}.cassette").read_bytes() == recording

    replay = run_endstate("eval", "--suite", str(TASKS), "--model", "scripted/reference", "--replay", str(cassettes),
                          *[a for t in TASK_IDS[:3] for a in ("--task", t)], "--out", str(tmp_path / "replay"))
    assert replay.code == 0, replay  # strict: every request matched, every recorded answer played
    assert [t["outcome"] for t in _finished(tmp_path / "replay")] == ["pass"] * 3
