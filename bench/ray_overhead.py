"""What the Ray executor costs: the same replay, local and on a Ray cluster, in one run.

    python bench/ray_overhead.py              # 6 tasks of the reference arm, -j 2
    python bench/ray_overhead.py --all        # the whole suite

Starts a throwaway cluster on this machine (a head and one worker node, one CPU each,
so Ray runs as many tasks at once as the local -j 2) and replays the reference arm's
cassettes: once first on the new cluster (its nodes' caches cold), then local and Ray
alternately, ROUNDS times each, so that drift in the machine's load hits both alike.
Prints each wall time, the best of each executor, their ratio, and the overhead per
task: (Ray wall - local wall) x jobs / tasks, the extra time each task held a slot.
Every Ray run is a new Ray job whose workers import endstate and start their agent
fork server afresh: a fixed cost per run and slot, which more tasks per run amortise.
Cluster start-up is printed apart, counted in neither.
"""

from __future__ import annotations

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
ROUNDS = 2


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
    n = len(tasks)

    def overhead(wall: float, local: float) -> str:
        return f"{wall / local:.2f}x local, {(wall - local) * JOBS / n:+.2f} s per task"

    start = time.perf_counter()
    with LocalRayCluster(cpus_per_node=1) as cluster:
        print(f"ray cluster start (2 nodes, not counted): {time.perf_counter() - start:6.1f} s")
        ray_args = ("--executor", "ray", "--ray-address", cluster.address)
        cold = replay(tasks, *ray_args, cluster=cluster)
        print(f"ray, first run on the new cluster: {cold:6.1f} s")
        walls: dict[str, list[float]] = {"local": [], "ray": []}
        for round_ in range(ROUNDS):
            walls["local"].append(replay(tasks))
            walls["ray"].append(replay(tasks, *ray_args, cluster=cluster))
            print(f"round {round_ + 1}: local {walls['local'][-1]:6.1f} s, ray {walls['ray'][-1]:6.1f} s")
    local, on_ray = min(walls["local"]), min(walls["ray"])
    print(f"{n} tasks, -j {JOBS}, best of {ROUNDS}: local {local:.1f} s, ray {on_ray:.1f} s "
          f"({overhead(on_ray, local)}); first run on the new cluster: {overhead(cold, local)}")


if __name__ == "__main__":
    main(sys.argv[1:])
