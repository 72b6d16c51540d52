"""What the machinery around a task costs against plain docker-py doing the same work, in one run.

    python bench/machinery.py lifecycle [--rounds 20]    # start latency p50/p95/p99 and CPU per lifecycle
    python bench/machinery.py tasks [--rounds 2]         # the 22-task replay against the docker-py floor, -j 2

`lifecycle` alternates, round by round (which goes first alternates too), four lives:
- sandbox, endstate: `open_sandbox` -> `exec("true")` -> `close()`;
- sandbox, docker-py: create + start (init, no network), one exec of `true` (create, start,
  inspect), remove;
- grading, endstate: `prepare_grading_sandbox` (the harness's entry point put in) ->
  `exec("true")` (under the seccomp filter) -> `close()`;
- grading, docker-py: the same container create + start with the harness's runtime volume
  mounted read-only, the same harness files put in by `put_archive`, one exec, remove.

`tasks` runs `endstate eval --suite tasks --replay cassettes/scripted-reference -j 2` and the
floor's procedure (bench/floor.py: one container per task, every allowed trajectory command
and every test run as a `docker exec`, staging by `put_archive`) as two threads, alternately.

CPU is counted where it is spent: our processes (this one's thread, or the replay's process
tree), the containers' own processes (their cgroups), their shims (containerd-shim, and the
runc runs they wait for), and the engine (dockerd, its re-executions, containerd). The engine
is shared with whatever else runs on the machine: its column holds their work too, equally
on both sides on average (the arms alternate); the idle rate measured first says how much.
A container's and its shim's last CPU (the kill and the removal) is lost with them, on both
sides alike. Engine API calls are counted through a proxy (bench/engine_calls.py).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import docker
from _common import ROOT
from engine_calls import CountingProxy, show
from floor import Plan, _create, _exec, floor

from endstate.grading import prepare_grading_sandbox
from endstate.grading._testrun import HARNESS_DIR, REPORT_DIR, harness_files
from endstate.sandbox import DEFAULT_IMAGE, SandboxLimits, open_sandbox
from endstate.sandbox._runtime import RUNTIME, runtime_volume
from endstate.sandbox._tree import harness_tar
from endstate.task import load_suite

_HZ = os.sysconf("SC_CLK_TCK")


def _proc(pid: int | str) -> tuple[float, float]:
    """(own, waited-for children's) CPU seconds of a process; zeros when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    return (int(fields[11]) + int(fields[12])) / _HZ, (int(fields[13]) + int(fields[14])) / _HZ


def _pid(name: str) -> str:
    found = subprocess.run(["pgrep", "-o", "-x", name], capture_output=True, text=True).stdout.split()
    return found[0] if found else "0"


DOCKERD, CONTAINERD = _pid("dockerd"), _pid("containerd")


def engine_cpu() -> float:
    """dockerd (with the children it re-executed) and containerd (with its children)."""
    return sum(_proc(DOCKERD)) + sum(_proc(CONTAINERD))


def container_cpu(container_id: str) -> float:
    """CPU seconds of the container's processes so far (cgroup v1 or v2), 0 when it has none."""
    for path, micro in ((f"/sys/fs/cgroup/cpuacct/docker/{container_id}/cpuacct.usage", False),
                        (f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope/cpu.stat", True),
                        (f"/sys/fs/cgroup/docker/{container_id}/cpu.stat", True)):
        try:
            text = Path(path).read_text()
        except OSError:
            continue
        return int(text.split()[1]) / 1e6 if micro else int(text) / 1e9
    return 0.0


def shims() -> dict[str, str]:
    """Container id -> pid of its containerd shim, for every shim running."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and b"containerd-shim" in argv[0] and b"-id" in argv:
            found[argv[argv.index(b"-id") + 1].decode()] = entry.name
    return found


def held(container_id: str) -> tuple[float, float]:
    """(the container's CPU, its shim's) so far."""
    shim = shims().get(container_id)
    return container_cpu(container_id), sum(_proc(shim)) if shim else 0.0


class Life:
    """One lifecycle's wall and CPU: ours (this thread), the container's, its shim's, the engine's."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}

    def __enter__(self) -> Life:
        self._wall, self._ours, self._engine = time.perf_counter(), time.thread_time(), engine_cpu()
        return self

    def before_removal(self, container_id: str) -> None:
        self.cpu["container"], self.cpu["shim"] = held(container_id)

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self._wall
        self.cpu["ours"] = time.thread_time() - self._ours
        self.cpu["engine"] = engine_cpu() - self._engine


def endstate_sandbox(limits: SandboxLimits) -> Life:
    with Life() as life:
        box = open_sandbox("docker", image=DEFAULT_IMAGE, limits=limits, name_hint="bench-machinery")
        assert box.exec("true").ok
        life.before_removal(box.container_id)
        box.close()
    return life


def plain_sandbox(client: docker.DockerClient, limits: SandboxLimits) -> Life:
    with Life() as life:
        container = _create(client, DEFAULT_IMAGE)
        assert _exec(client, container, "true") == 0
        life.before_removal(container)
        client.api.remove_container(container, force=True)
    return life


def endstate_grading(limits: SandboxLimits) -> Life:
    with Life() as life:
        box = prepare_grading_sandbox("docker", DEFAULT_IMAGE, limits, "bench-machinery")
        assert box.exec("true").ok
        life.before_removal(box.container_id)
        box.close()
    return life


def plain_grading(client: docker.DockerClient, limits: SandboxLimits) -> Life:
    volume = runtime_volume(client)
    archive = harness_tar({HARNESS_DIR: (harness_files(), "root"), REPORT_DIR: ({}, "scratch")}, 1000)
    with Life() as life:
        container = client.api.create_container(
            DEFAULT_IMAGE, ["sleep", "infinity"], labels={"endstate": "1"},
            host_config=client.api.create_host_config(init=True, network_mode="none",
                                                      mounts=[docker.types.Mount(RUNTIME, volume, type="volume",
                                                                                 read_only=True)]))["Id"]
        client.api.start(container)
        client.api.put_archive(container, "/", archive)
        assert _exec(client, container, "true") == 0
        life.before_removal(container)
        client.api.remove_container(container, force=True)
    return life


def percentiles(values: list[float]) -> tuple[float, float, float]:
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return cuts[49], cuts[94], cuts[98]


def lifecycle(rounds: int) -> None:
    limits, client = SandboxLimits(), docker.from_env()
    arms = {"sandbox, endstate": lambda: endstate_sandbox(limits),
            "sandbox, docker-py": lambda: plain_sandbox(client, limits),
            "grading, endstate": lambda: endstate_grading(limits),
            "grading, docker-py": lambda: plain_grading(client, limits)}
    for arm in arms.values():  # the shared client, the image and the runtime volume: paid once
        arm()
    lives: dict[str, list[Life]] = {name: [] for name in arms}
    for round_ in range(rounds):
        order = list(arms) if round_ % 2 == 0 else [*reversed(arms)]
        for name in order:
            lives[name].append(arms[name]())
    print(f"{rounds} rounds, alternating; wall create -> first exec -> close, ms:")
    walls = {name: percentiles([life.wall * 1000 for life in ls]) for name, ls in lives.items()}
    for name, (p50, p95, p99) in walls.items():
        print(f"  {name:20s} p50 {p50:5.0f}  p95 {p95:5.0f}  p99 {p99:5.0f}")
    for kind in ("sandbox", "grading"):
        ours, plain = walls[f"{kind}, endstate"], walls[f"{kind}, docker-py"]
        print(f"  {kind}: endstate / docker-py  p50 {ours[0] / plain[0]:.2f}x  p95 {ours[1] / plain[1]:.2f}x  "
              f"p99 {ours[2] / plain[2]:.2f}x")
    print("CPU seconds per lifecycle (mean): ours, container, shim, engine (shared), all")
    for name, ls in lives.items():
        mean = {k: statistics.mean(life.cpu[k] for life in ls) for k in ("ours", "container", "shim", "engine")}
        print(f"  {name:20s} " + "  ".join(f"{k} {v:.3f}" for k, v in mean.items()) + f"  all {sum(mean.values()):.3f}")


class Sampler:
    """Follows the containers a proxy saw made: the last CPU seen of each, and of its shim."""

    def __init__(self, proxy: CountingProxy) -> None:
        self._proxy, self.seen = proxy, {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        self.cpu = 0.0
        start = time.thread_time()
        while not self._stop.wait(0.05):
            running = shims()
            for container in list(self._proxy.created):
                shim = running.get(container)
                now = (container_cpu(container), sum(_proc(shim)) if shim else 0.0)
                last = self.seen.get(container, (0.0, 0.0))
                self.seen[container] = (max(now[0], last[0]), max(now[1], last[1]))
        self.cpu = time.thread_time() - start

    def close(self) -> tuple[float, float, float]:
        """(containers', shims' CPU, the sampler's own)."""
        self._stop.set()
        self._thread.join()
        return sum(c for c, _ in self.seen.values()), sum(s for _, s in self.seen.values()), self.cpu


def replay(proxy: CountingProxy, tasks: int) -> dict[str, float]:
    env = {**os.environ, "DOCKER_HOST": proxy.url}
    env.pop("ENDSTATE_DOCKER_API", None)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as out:
        proc = subprocess.run([sys.executable, "-m", "endstate", "eval", "--suite", "tasks", "--replay",
                               "cassettes/scripted-reference", "-j", "2", "--out", out], cwd=ROOT, env=env,
                              capture_output=True, text=True)
        if proc.returncode != 0 or f"{tasks}/{tasks} passed" not in proc.stdout:
            sys.exit(f"the replay did not pass every task:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"ours": after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime}


def floor_j2(proxy: CountingProxy, plans: list[Plan]) -> dict[str, float]:
    used: list[float] = []

    def share(part: list[Plan]) -> None:
        start = time.thread_time()
        floor(docker.DockerClient(base_url=proxy.url), part, DEFAULT_IMAGE)
        used.append(time.thread_time() - start)

    threads = [threading.Thread(target=share, args=(plans[i::2],)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return {"ours": sum(used)}


def tasks(rounds: int) -> None:
    suite, _ = load_suite(ROOT / "tasks")
    plans = [Plan(task) for task in suite]
    proxy = CountingProxy()
    idle = engine_cpu()
    time.sleep(5)
    rate = (engine_cpu() - idle) / 5
    print(f"{len(plans)} tasks; the shared engine burns {rate:.3f} CPU s a second before we start (others' work)")
    arms = {"endstate replay": lambda: replay(proxy, len(plans)), "docker-py floor": lambda: floor_j2(proxy, plans)}
    walls: dict[str, list[float]] = {name: [] for name in arms}
    cpus: dict[str, Counter[str]] = {name: Counter() for name in arms}
    calls: dict[str, Counter[str]] = {name: Counter() for name in arms}
    for round_ in range(rounds):
        for name in (arms if round_ % 2 == 0 else [*reversed(arms)]):
            proxy.take()
            proxy.created.clear()
            sampler, engine, started = Sampler(proxy), engine_cpu(), time.perf_counter()
            cpu = arms[name]()
            walls[name].append(time.perf_counter() - started)
            cpu["engine"] = engine_cpu() - engine
            cpu["containers"], cpu["shims"], _ = sampler.close()
            cpus[name].update(cpu)
            calls[name].update(proxy.take())
            print(f"round {round_ + 1}: {name:16s} {walls[name][-1]:6.1f} s wall, {sum(cpu.values()):6.1f} CPU s",
                  flush=True)
    per = rounds * len(plans)
    replay_wall, floor_wall = (statistics.median(walls[n]) for n in arms)
    print(f"22-task replay / docker-py floor at -j 2, wall: {replay_wall / floor_wall:.2f}x (medians)")
    print("CPU seconds per task: ours, containers, shims, engine (shared), all")
    for name in arms:
        mean = {k: cpus[name][k] / per for k in ("ours", "containers", "shims", "engine")}
        print(f"  {name:16s} " + "  ".join(f"{k} {v:.2f}" for k, v in mean.items()) + f"  all {sum(mean.values()):.2f}")
    for name in arms:
        print(f"engine API calls per task, {name}:")
        show(calls[name], per)
    proxy.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("lifecycle", "tasks"))
    parser.add_argument("--rounds", type=int)
    options = parser.parse_args()
    if options.what == "lifecycle":
        lifecycle(options.rounds or 20)
    else:
        tasks(options.rounds or 2)


if __name__ == "__main__":
    main()
