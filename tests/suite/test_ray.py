"""The Ray executor against a real Ray cluster (a head and one extra worker node on
this machine, started and stopped by the tests): the same inputs give the same
outputs as the local executor, and a Ray worker killed mid-task costs a retry, not
a result.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec
import pytest

from endstate.cassettes import diff, load
from endstate.suite import read_results

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "tasks"
CASSETTES = ROOT / "cassettes"
#: A bug fix, the checkpoint task (killed and resumed on the node) and a denial task.
SUBSET = ["bugfix-lru-eviction", "checkpoint-append-migration", "deny-recursive-delete"]



def test_without_ray_the_executor_says_how_to_install_it(tmp_path):
    (tmp_path / "ray.py").write_text("raise ImportError('No module named ray')\n")  # Ray, as if not installed
    ran = subprocess.run([sys.executable, "-m", "endstate", "eval", "--model", "scripted/reference", "--replay",
                          str(CASSETTES / "scripted-reference"), "--task", SUBSET[0], "--out", str(tmp_path / "run"),
                          "--executor", "ray"], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(tmp_path)})
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
        _CLUSTER = running
        try:
            yield running.address
        finally:
            _CLUSTER = None


#: The running test cluster: drivers of Ray runs join it inside its network namespace.
_CLUSTER = None


def _argv(args: tuple[str, ...]) -> list[str]:
    argv = [sys.executable, "-m", "endstate", *args]
    return _CLUSTER.wrap(argv) if _CLUSTER is not None and "ray" in args else argv


def endstate(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(_argv(args), cwd=ROOT, capture_output=True, text=True, timeout=timeout)


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
    """results.json without its measurement fields (wall and sandbox seconds)."""
    raw = msgspec.json.decode((run / "results.json").read_bytes())
    for task in raw["tasks"]:
        task.pop("wall_s"), task.pop("sandbox_s")
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
    """Pids of Ray worker processes running an endstate task right now (Ray titles them)."""
    ps = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    return [int(line.split()[0]) for line in ps.splitlines() if line.split()[1:2] == ["ray::run_on_node"]]


def _scratch_of(pid: int) -> tuple[Path | None, str]:
    """The scratch folder of the attempt a worker runs, and its sandbox container."""
    for folder in Path(tempfile.gettempdir()).glob("endstate-ray-*"):
        with contextlib.suppress(OSError):
            if (folder / "owner").read_text() == str(pid):
                for job in folder.glob("out/work/*/job.json"):
                    try:
                        return folder, msgspec.json.decode(job.read_bytes())["sandbox"]["container"]
                    except msgspec.DecodeError:  # caught mid-write: look again on the next poll
                        return folder, ""
                return folder, ""
    return None, ""


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
    killed, scratch, container = None, None, ""
    try:
        deadline = time.monotonic() + 300
        while killed is None and time.monotonic() < deadline and run.poll() is None:
            for pid in _ray_task_workers():
                scratch, container = _scratch_of(pid)
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
    assert result.vector == [(task, "pass") for task in SUBSET]
    assert out.count("PASS") == len(SUBSET)
    # The next attempt on this node removed what the killed one left behind.
    assert not _container_exists(container)
    assert not scratch.exists()
