"""The Ray executor against a real Ray cluster (a head and one extra worker node on
this machine, started once for the module and stopped by it, with every process it
started): the same inputs give the same outputs as the local executor, a killed Ray
run resumes to the local result, `--attempts` runs as locally, and a slot killed
mid-task costs a retry, not a result. The runs share the cluster's warm slots, as
back-to-back runs of a user do.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import msgspec
import pytest
from cli_runner import argv, run_endstate

from endstate.cassettes import diff, load
from endstate.run import read_results

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "tasks"
CASSETTES = ROOT / "cassettes"
#: A bug fix, the checkpoint task (killed and resumed on the node) and a denial task.
SUBSET = ["bugfix-lru-eviction", "checkpoint-append-migration", "deny-recursive-delete"]


def test_without_ray_the_executor_says_how_to_install_it(tmp_path):
    (tmp_path / "ray.py").write_text("raise ImportError('No module named ray')\n")  # Ray, as if not installed
    ran = run_endstate("eval", "--model", "scripted/reference", "--replay", str(CASSETTES / "scripted-reference"),
                       "--task", SUBSET[0], "--out", str(tmp_path / "run"), "--executor", "ray", timeout=120,
                       env={"PYTHONPATH": str(tmp_path)})
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.strip() == ("endstate: error: --executor ray needs Ray on this machine and on every node: "
                                  "pip install 'endstate[ray]'")
    assert not (tmp_path / "run").exists()  # nothing ran


def _ray_or_skip() -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail("CI must install the ray extra (pip install -e '.[ray]')", pytrace=False)
        pytest.skip("ray is not installed (pip install -e '.[ray]')")


def test_an_unreachable_head_is_one_line_and_exit_2(tmp_path):
    _ray_or_skip()
    ran = endstate("eval", "--model", "scripted/reference", "--replay", str(CASSETTES / "scripted-reference"),
                   "--task", SUBSET[0], "--out", str(tmp_path / "run"), "--executor", "ray",
                   "--ray-address", "127.0.0.1:1", timeout=120)
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.startswith("endstate: error: cannot reach the Ray head at 127.0.0.1:1: ")
    assert len(ran.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


@pytest.fixture(scope="module")
def cluster():
    _ray_or_skip()
    from ray_cluster import LocalRayCluster

    global _CLUSTER
    with LocalRayCluster(cpus_per_node=1) as running:
        sessions = {proc.pid for proc in running.procs}  # every process of the cluster is in one of them
        _CLUSTER = running
        try:
            yield running.address
        finally:
            _CLUSTER = None
            pids = {proc.pid for proc in _in_sessions(sessions)}
    # Nothing of the cluster outlives the module (the slots it kept warm included), nor any sandbox of theirs.
    deadline = time.monotonic() + 30
    while _in_sessions(sessions) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _in_sessions(sessions) == []
    assert _containers_of(pids) == []


class _Proc(NamedTuple):
    pid: int
    nice: int
    args: str


def _in_sessions(sessions: set[int]) -> list[_Proc]:
    """The processes of these sessions, read from /proc: ps cuts a long command line to the
    width it is given (COLUMNS), which lost the fork server's name on a machine with long paths."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            args = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # from the state on: the name may hold spaces
        if int(fields[3]) in sessions:  # fields: state ppid pgrp session ... (nice is the 17th)
            found.append(_Proc(int(entry.name), int(fields[16]), args))
    return found


def _containers_of(pids: set[int]) -> list[str]:
    """Sandbox containers made by one of these processes."""
    import docker

    client = docker.from_env()
    try:
        return [c["Id"] for c in client.api.containers(all=True, filters={"label": "endstate"})
                if c.get("Labels", {}).get("endstate.owner.pid", "").isdigit()
                and int(c["Labels"]["endstate.owner.pid"]) in pids]
    finally:
        client.close()


#: The running test cluster: drivers of Ray runs join it inside its network namespace.
_CLUSTER = None


def _wrap(args: tuple[str, ...]) -> Callable[[list[str]], list[str]] | None:
    """A Ray run's driver joins the test cluster inside its network namespace."""
    return _CLUSTER.wrap if _CLUSTER is not None and "ray" in args else None


def _argv(args: tuple[str, ...]) -> list[str]:
    return argv(*args, wrap=_wrap(args))


def endstate(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return run_endstate(*args, timeout=timeout, wrap=_wrap(args))


def _task_args() -> list[str]:
    return [arg for task in SUBSET for arg in ("--task", task)]


def _run(mode: str, arm: str, out: Path, *executor: str) -> subprocess.CompletedProcess:
    if mode == "replay":
        args = ["eval", "--replay", str(CASSETTES / f"scripted-{arm}")]
    else:
        args = ["record", "--cassettes", str(out / "cassettes")]
    return endstate(*args, "--model", f"scripted/{arm}", "--suite", str(TASKS), *_task_args(), "-j", "2",
                    "--out", str(out / "run"), *executor)


def _comparable(run: Path) -> dict:
    """results.json without its measurement fields (wall, sandbox and agent seconds)."""
    raw = msgspec.json.decode((run / "results.json").read_bytes())
    for task in raw["tasks"]:
        task.pop("wall_s"), task.pop("sandbox_s"), task.pop("agent_s")
    return raw


@pytest.mark.docker
@pytest.mark.parametrize("arm", ["reference", "null"])
def test_replay_on_ray_matches_the_local_executor(cluster, tmp_path, arm):
    local = _run("replay", arm, tmp_path / "local")
    on_ray = _run("replay", arm, tmp_path / "ray", "--executor", "ray", "--ray-address", cluster)
    assert local.returncode == on_ray.returncode == 0, (local.stderr, on_ray.stderr)
    local_result, ray_result = read_results(tmp_path / "local" / "run"), read_results(tmp_path / "ray" / "run")
    expected = "pass" if arm == "reference" else "fail"
    assert ray_result.vector == local_result.vector == [(task, expected) for task in SUBSET]
    assert [t.tree_hash for t in ray_result.tasks] == [t.tree_hash for t in local_result.tasks]
    assert all(t.tree_hash for t in ray_result.tasks)
    # Everything else the results say (card, counters, verdicts, reasons) is the same too.
    assert _comparable(tmp_path / "ray" / "run") == _comparable(tmp_path / "local" / "run")
    for task in SUBSET:  # the driver wrote the node's transcript where a local run puts it
        assert ((tmp_path / "ray" / "run" / "transcripts" / f"{task}.json").read_bytes()
                == (tmp_path / "local" / "run" / "transcripts" / f"{task}.json").read_bytes())
    resumed = {t.task_id: t.counters.resumes for t in ray_result.tasks}
    if arm == "reference":
        assert resumed["checkpoint-append-migration"] == 1  # killed and resumed on the node


@pytest.mark.docker
def test_recording_on_ray_writes_the_same_cassettes_as_a_local_recording(cluster, tmp_path):
    local = _run("record", "reference", tmp_path / "local")
    on_ray = _run("record", "reference", tmp_path / "ray", "--executor", "ray", "--ray-address", cluster)
    assert local.returncode == on_ray.returncode == 0, (local.stderr, on_ray.stderr)
    for task in SUBSET:
        a, b = tmp_path / "local" / "cassettes" / f"{task}.cassette", tmp_path / "ray" / "cassettes" / f"{task}.cassette"
        identical, text = diff(a, b)
        assert identical, text
        one, other = load(a), load(b)
        # The creation time is the only value a cassette may hold that differs between recordings.
        assert msgspec.structs.replace(one.header, created="") == msgspec.structs.replace(other.header, created="")
        assert msgspec.msgpack.encode(one.interactions) == msgspec.msgpack.encode(other.interactions)
    assert read_results(tmp_path / "ray" / "run").vector == [(task, "pass") for task in SUBSET]


def _ray_task_workers() -> list[int]:
    """Pids of endstate slots running a batch right now (Ray titles them)."""
    sessions = {proc.pid for proc in _CLUSTER.procs}  # this cluster's, not another test run's on the machine
    return [proc.pid for proc in _in_sessions(sessions) if proc.args.split()[:1] == ["ray::Slot.run"]]


def _scratch_of(pid: int) -> tuple[Path | None, str, str]:
    """The scratch folder of the batch a slot runs, the sandbox container of its task under way, and that task."""
    for folder in Path(tempfile.gettempdir()).glob("endstate-ray-*"):
        with contextlib.suppress(OSError):
            if (folder / "owner").read_text() == str(pid):
                for job in folder.glob("out/work/*/job.json"):
                    try:
                        return folder, msgspec.json.decode(job.read_bytes())["sandbox"]["container"], job.parent.name
                    except msgspec.DecodeError:  # caught mid-write: look again on the next poll
                        return folder, "", ""
                return folder, "", ""
    return None, "", ""


def _container_exists(container: str) -> bool:
    import docker

    client = docker.from_env()
    try:
        client.containers.get(container)
        return True
    except docker.errors.NotFound:
        return False
    finally:
        client.close()


@pytest.mark.docker
def test_a_worker_killed_mid_task_is_retried_and_every_task_recorded_once(cluster, tmp_path):
    run = subprocess.Popen(
        _argv(("eval", "--model", "scripted/reference", "--suite", str(TASKS),
               "--replay", str(CASSETTES / "scripted-reference"), *_task_args(), "-j", "2", "--out", str(tmp_path / "run"),
               "--expect", "pass", "--executor", "ray", "--ray-address", cluster)),
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed, scratch, container, task = None, None, "", ""
    try:
        deadline = time.monotonic() + 300
        while killed is None and time.monotonic() < deadline and run.poll() is None:
            for pid in _ray_task_workers():
                scratch, container, task = _scratch_of(pid)
                if container:  # into the task: its sandbox is up and the agent is working
                    os.kill(pid, signal.SIGKILL)
                    killed = pid
                    break
            time.sleep(0.2)
        out, err = run.communicate(timeout=900)
    finally:
        if run.poll() is None:
            run.kill()
    assert killed is not None, "no Ray worker was seen running a task"
    assert run.returncode == 0, (out, err)
    result = read_results(tmp_path / "run")
    assert [t.task_id for t in result.tasks] == SUBSET  # each task once, none lost, none twice
    assert result.vector == [(task_id, "pass") for task_id in SUBSET]
    assert out.count("PASS") == len(SUBSET)
    # A fault of the machinery, counted as a local run counts one: the killed task ran again from scratch.
    assert {t.task_id: t.infra_retries for t in result.tasks} == {t: int(t == task) for t in SUBSET}
    # The slot made in place of the killed one removed what it left behind.
    assert not _container_exists(container)
    assert not scratch.exists()


#: Four tasks of the reference arm: a kill after the first result leaves some finished, some not.
RESUMED = ["bugfix-invoice-rounding", "bugfix-lru-eviction", "feature-recipe-scaling", "refactor-dedupe-validators"]


def _results(run: Path) -> list[dict]:
    path = run / "results.json"
    return msgspec.json.decode(path.read_bytes())["tasks"] if path.is_file() else []


@pytest.mark.docker
def test_a_killed_ray_run_is_resumed_to_the_local_result(cluster, tmp_path):
    replay = ("eval", "--model", "scripted/reference", "--suite", str(TASKS), "--replay",
              str(CASSETTES / "scripted-reference"), *[a for t in RESUMED for a in ("--task", t)], "-j", "2")
    local = endstate(*replay, "--out", str(tmp_path / "local"))
    assert local.returncode == 0, local.stderr
    on_ray = (*replay, "--out", str(tmp_path / "ray"), "--executor", "ray", "--ray-address", cluster)
    driver = subprocess.Popen(_argv(on_ray), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and driver.poll() is None and not _results(tmp_path / "ray"):
            time.sleep(0.05)
    finally:
        driver.kill()  # SIGKILL: no handler of the driver runs
        driver.wait()
    left = _results(tmp_path / "ray")
    assert 1 <= len(left) < len(RESUMED), "the kill should land after the first result and before the last"

    resumed = endstate(*on_ray, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    ray_result, local_result = read_results(tmp_path / "ray"), read_results(tmp_path / "local")
    assert ray_result.vector == local_result.vector == [(task, "pass") for task in RESUMED]
    assert [t.tree_hash for t in ray_result.tasks] == [t.tree_hash for t in local_result.tasks]
    assert _comparable(tmp_path / "ray") == _comparable(tmp_path / "local")
    kept = {t.task_id: t for t in ray_result.tasks}
    for task in left:  # what finished before the kill was kept, not run again
        assert kept[task["task_id"]].wall_s == task["wall_s"]
    for task in RESUMED:
        assert ((tmp_path / "ray" / "transcripts" / f"{task}.json").read_bytes()
                == (tmp_path / "local" / "transcripts" / f"{task}.json").read_bytes())
    # Ray and local runs write the same run file: either executor resumes the other's run.
    assert (tmp_path / "ray" / "run.json").read_bytes() == (tmp_path / "local" / "run.json").read_bytes()


@pytest.mark.docker
def test_attempts_on_ray_record_what_local_attempts_record(cluster, tmp_path):
    tasks = ["bugfix-lru-eviction", "deny-recursive-delete"]
    record = ("record", "--model", "scripted/reference", "--suite", str(TASKS), *[a for t in tasks for a in ("--task", t)],
              "--attempts", "3", "--seed", "7", "-j", "2")
    for where, executor in (("local", ()), ("ray", ("--executor", "ray", "--ray-address", cluster))):
        ran = endstate(*record, "--cassettes", str(tmp_path / where / "cassettes"), "--out", str(tmp_path / where / "run"),
                       *executor)
        assert ran.returncode == 0, ran.stderr
    ray_result, local_result = read_results(tmp_path / "ray" / "run"), read_results(tmp_path / "local" / "run")
    assert ray_result.vector == local_result.vector == sorted(
        (task if k == 0 else f"{task}.attempt-{k}", "pass") for task in tasks for k in range(3))
    assert [t.tree_hash for t in ray_result.tasks] == [t.tree_hash for t in local_result.tasks]
    assert _comparable(tmp_path / "ray" / "run") == _comparable(tmp_path / "local" / "run")
    names = sorted(p.name for p in (tmp_path / "local" / "cassettes").iterdir())
    assert sorted(p.name for p in (tmp_path / "ray" / "cassettes").iterdir()) == names and len(names) == 6
    for name in names:  # each attempt recorded with its own seed, the same interactions
        one, other = load(tmp_path / "local" / "cassettes" / name), load(tmp_path / "ray" / "cassettes" / name)
        assert msgspec.structs.replace(one.header, created="") == msgspec.structs.replace(other.header, created="")
        assert msgspec.msgpack.encode(one.interactions) == msgspec.msgpack.encode(other.interactions)


@pytest.mark.docker
def test_slots_and_their_agents_run_at_the_priority_of_a_local_run(cluster, tmp_path):
    """Ray starts its workers at niceness 15: a slot's agents would wait behind every other
    process of the node (the sandbox containers included), which a local run's do not."""
    ran = endstate("eval", "--model", "scripted/reference", "--suite", str(TASKS), "--replay",
                   str(CASSETTES / "scripted-reference"), "--task", SUBSET[0], "--out", str(tmp_path / "run"),
                   "--executor", "ray", "--ray-address", cluster)
    assert ran.returncode == 0, ran.stderr
    sessions = {proc.pid for proc in _CLUSTER.procs}
    ours = _in_sessions(sessions)
    slots = [proc.nice for proc in ours if proc.args.startswith("ray::Slot")]
    fork_servers = [proc.nice for proc in ours if "multiprocessing.forkserver" in proc.args]
    assert slots and fork_servers  # kept warm, with the fork server the agents are forked from
    assert set(slots) == set(fork_servers) == {0}


@pytest.mark.docker
def test_warm_slots_end_themselves_after_the_warm_time(cluster, tmp_path):
    """Last of the module: the slots the runs above kept warm take this run's --ray-warm and end."""
    ran = endstate("eval", "--model", "scripted/reference", "--suite", str(TASKS), "--replay",
                   str(CASSETTES / "scripted-reference"), "--task", SUBSET[0], "-j", "2", "--out", str(tmp_path / "run"),
                   "--executor", "ray", "--ray-address", cluster, "--ray-warm", "2")
    assert ran.returncode == 0, ran.stderr
    sessions = {proc.pid for proc in _CLUSTER.procs}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and [proc for proc in _in_sessions(sessions) if "ray::Slot" in proc.args]:
        time.sleep(0.5)
    assert [proc for proc in _in_sessions(sessions) if "ray::Slot" in proc.args] == []
