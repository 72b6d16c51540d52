"""What the Ray executor costs: the same replay, local and on a Ray cluster, in one run.

    python bench/ray_overhead.py              # 6 tasks of the reference arm, -j 2
    python bench/ray_overhead.py --all        # the whole suite

Starts a throwaway cluster on this machine (a head and one worker node, one CPU each,
so Ray runs as many tasks at once as the local -j 2), replays the reference arm's
cassettes with `--executor local` and twice with `--executor ray` (the first on fresh
Ray workers, which import endstate and start their agent fork server; the second on
warm ones), and prints wall times, the ratio, and the overhead per task:
(Ray wall - local wall) x jobs / tasks, i.e. the extra time each task held a slot.
Cluster start-up is printed apart and counted in neither.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, timed

sys.path.insert(0, str(ROOT / "tests" / "suite"))
from ray_cluster import LocalRayCluster  # noqa: E402

SUBSET = ["bugfix-invoice-rounding", "bugfix-lru-eviction", "checkpoint-append-migration", "deny-recursive-delete",
          "feature-recipe-scaling", "refactor-dedupe-validators"]
JOBS = 2


def replay(tasks: list[str], *executor: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        only = [arg for task in tasks for arg in ("--task", task)]
        elapsed, proc = timed("eval", "--model", "scripted/reference", "--replay", "cassettes/scripted-reference",
                              *only, "-j", str(JOBS), "--expect", "pass", "--out", tmp, *executor)
    if proc.returncode != 0:
        sys.exit(f"the replay did not pass every task:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return elapsed


def main(argv: list[str]) -> None:
    from endstate.suite import load_suite

    tasks = sorted(t.id for t in load_suite(ROOT / "tasks")[0]) if "--all" in argv else SUBSET
    n = len(tasks)
    local = replay(tasks)
    print(f"local  -j {JOBS}, {n} tasks:             {local:6.1f} s")
    start = time.perf_counter()
    with LocalRayCluster(cpus_per_node=1) as cluster:
        print(f"ray cluster start (2 nodes, not counted): {time.perf_counter() - start:6.1f} s")
        ray_args = ("--executor", "ray", "--ray-address", cluster.address)
        cold = replay(tasks, *ray_args)
        warm = replay(tasks, *ray_args)
    for label, wall in (("ray, fresh workers", cold), ("ray, warm workers ", warm)):
        per_task = (wall - local) * JOBS / n
        print(f"{label} -j {JOBS}, {n} tasks:  {wall:6.1f} s  ({wall / local:.2f}x local; "
              f"{per_task:+.2f} s per task)")


if __name__ == "__main__":
    main(sys.argv[1:])
