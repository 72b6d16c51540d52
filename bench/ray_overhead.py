"""What the Ray executor costs: the same replay, local and on a Ray cluster, in one run.

    python bench/ray_overhead.py                  # 6 tasks of the reference arm, -j 2
    python bench/ray_overhead.py --all            # the whole suite
    python bench/ray_overhead.py --all --rounds 5

Starts a throwaway cluster on this machine (a head and one worker node, one CPU each,
so Ray runs as many tasks at once as the local -j 2; no dashboard, no log monitor: see
tests/run/ray_cluster.py for the `ray start` flags) and replays the reference arm's
cassettes: once first on the new cluster (its endstate slots are started: Ray workers
that import endstate and start the agents' fork server), then local and Ray
alternately, ROUNDS times each, so that drift in the machine's load hits both alike.
Every Ray run after the first is a new driver and a new Ray job, but finds the slots
the first one left warm (`--ray-warm`): that is the run a user pays for the second
time they run against the same cluster. Prints each wall time with the machine's load
average, each round's ratio (Ray / the local run just before it), the median ratio,
the best of each executor and the overhead per task: (Ray wall - local wall) x jobs /
tasks, the extra time each task held a slot. Cluster start-up is printed apart.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

from _common import ROOT

sys.path.insert(0, str(ROOT / "tests" / "suite"))
from ray_cluster import LocalRayCluster  # noqa: E402

SUBSET = ["bugfix-invoice-rounding", "bugfix-lru-eviction", "checkpoint-append-migration", "deny-recursive-delete",
          "feature-recipe-scaling", "refactor-dedupe-validators"]
JOBS = 2
ROUNDS = 3


def replay(tasks: list[str], *executor: str, cluster: LocalRayCluster | None = None) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        only = [arg for task in tasks for arg in ("--task", task)]
        argv = [sys.executable, "-m", "endstate", "eval", "--model", "scripted/reference", "--replay",
                "cassettes/scripted-reference", *only, "-j", str(JOBS), "--expect", "pass", "--out", tmp, *executor]
        start = time.perf_counter()
        proc = subprocess.run(cluster.wrap(argv) if cluster else argv, cwd=ROOT, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"the replay did not pass every task:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return elapsed


def main(argv: list[str]) -> None:
    from endstate.task import load_suite

    tasks = sorted(t.id for t in load_suite(ROOT / "tasks")[0]) if "--all" in argv else SUBSET
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else ROUNDS
    n = len(tasks)

    def load() -> str:
        return f"load {os.getloadavg()[0]:5.2f}"

    def overhead(wall: float, local: float) -> str:
        return f"{wall / local:.2f}x local, {(wall - local) * JOBS / n:+.2f} s per task"

    start = time.perf_counter()
    with LocalRayCluster(cpus_per_node=1) as cluster:
        print(f"ray cluster start (2 nodes, not counted): {time.perf_counter() - start:6.1f} s")
        ray_args = ("--executor", "ray", "--ray-address", cluster.address)
        print(f"{load()} before the first run")
        cold = replay(tasks, *ray_args, cluster=cluster)
        print(f"ray, first run on the new cluster (slots start): {cold:6.1f} s   {load()}")
        walls: dict[str, list[float]] = {"local": [], "ray": []}
        ratios = []
        for round_ in range(rounds):
            walls["local"].append(replay(tasks))
            at_local = load()
            walls["ray"].append(replay(tasks, *ray_args, cluster=cluster))
            ratios.append(walls["ray"][-1] / walls["local"][-1])
            print(f"round {round_ + 1}: local {walls['local'][-1]:6.1f} s ({at_local}), "
                  f"ray (warm slots) {walls['ray'][-1]:6.1f} s ({load()}): {ratios[-1]:.2f}x")
    local, on_ray = min(walls["local"]), min(walls["ray"])
    print(f"{n} tasks, -j {JOBS}, {rounds} rounds: median ray/local ratio {statistics.median(ratios):.2f}x; "
          f"best of each: local {local:.1f} s, ray {on_ray:.1f} s ({overhead(on_ray, local)}); "
          f"first run on the new cluster: {overhead(cold, local)}")

if __name__ == "__main__":
    main(sys.argv[1:])
