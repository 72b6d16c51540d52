"""What a task's sandbox lifecycle costs on its critical path: made and removed in line
(as runs did before) or made ahead and removed behind (`suite._ahead.Lookahead`).

    python bench/sandbox_lifecycle.py [tasks] [work-seconds]

Each "task" writes a shipped fixture into a fresh Docker sandbox and runs one command
(`sleep`, standing for the agent's work); it is the time outside that command that
counts. The two ways alternate (twice each) and the ratio is printed from this one run.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

from endstate.run._ahead import Lookahead
from endstate.sandbox import DEFAULT_IMAGE, Sandbox, load_dir, open_sandbox

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = load_dir(ROOT / "tasks" / "bugfix-lru-eviction" / "fixture", what="fixture")


def _made(key: int) -> Sandbox:
    box = open_sandbox("docker", image=DEFAULT_IMAGE, name_hint=f"bench-lifecycle-{key}")
    box.put_tree(FIXTURE)
    return box


def _work(box: Sandbox, seconds: float) -> float:
    start = time.perf_counter()
    box.exec(f"sleep {seconds}")
    return time.perf_counter() - start


def in_line(tasks: int, seconds: float) -> tuple[float, list[float]]:
    start, overhead = time.perf_counter(), []
    for key in range(tasks):
        began = time.perf_counter()
        box = _made(key)
        worked = _work(box, seconds)
        box.close()
        overhead.append(time.perf_counter() - began - worked)
    return time.perf_counter() - start, overhead


def pipelined(tasks: int, seconds: float) -> tuple[float, list[float]]:
    start, overhead = time.perf_counter(), []
    ahead: Lookahead[int, Sandbox] = Lookahead(list(range(tasks)), _made, lambda box: box.close(), depth=1)
    try:
        for key in range(tasks):
            began = time.perf_counter()
            box, _ = ahead.take(key)
            worked = _work(box, seconds)
            ahead.remove(box.close)
            overhead.append(time.perf_counter() - began - worked)
    finally:
        ahead.close()  # the run's end waits for the last removals: counted in the total
    return time.perf_counter() - start, overhead


def main(tasks: int, seconds: float) -> None:
    _made(-1).close()  # the shared client and the image lookup, paid once by either way
    totals: dict[str, list[float]] = {"in line": [], "pipelined": []}
    per_task: dict[str, list[float]] = {"in line": [], "pipelined": []}
    for _ in range(2):
        for name, way in (("in line", in_line), ("pipelined", pipelined)):
            total, overhead = way(tasks, seconds)
            totals[name].append(total)
            per_task[name].extend(overhead)
            print(f"{name:9s}: {total:5.2f} s for {tasks} tasks, lifecycle on the critical path "
                  f"median {statistics.median(overhead) * 1000:4.0f} ms a task")
    line, piped = (statistics.mean(per_task[n]) for n in ("in line", "pipelined"))
    print(f"critical-path lifecycle per task (mean, the first task's wait included): {line * 1000:.0f} ms in line, "
          f"{piped * 1000:.0f} ms pipelined; total {sum(totals['in line']) / sum(totals['pipelined']):.2f}x faster "
          f"({tasks} tasks of {seconds} s work)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 8, float(sys.argv[2]) if len(sys.argv) > 2 else 1.0)
