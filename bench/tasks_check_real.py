"""`endstate tasks check --suite tasks-real -j 2`: wall before and after, measured in one run.

Before is endstate as it was at BEFORE (default: the commit before tasks check ran
its rows in parallel, resolved each task's sandbox once, stopped rows that must fail
at their catcher, and the real tasks' hacks became diffs), run from a `git worktree`
of that commit with its own tasks-real; after is this checkout with its own. Only the
tasks both have are checked. Runs alternate (before, after, before, after, ...) so
that a change in the machine's load falls on both sides; a round counts only when
both of its runs check out.

    python bench/tasks_check_real.py [--rounds 2] [--before aa6ad00]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _task_ids(suite: Path) -> set[str]:
    return {p.name for p in suite.iterdir() if (p / "task.toml").is_file()}


def _check(checkout: Path, ids: list[str]) -> float | None:
    """The wall of one `tasks check`; None when it did not check out (on a loaded machine, a
    command can pass its timeout: that run's pair is left out, never counted)."""
    args = ["tasks", "check", "--suite", str(checkout / "tasks-real"), "-j", "2"]
    for task_id in ids:
        args += ["--task", task_id]
    # Run from the checkout, so that its own copy of the package is the one imported.
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "endstate", *args], cwd=checkout, env=env,
                          capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        print(f"tasks check in {checkout} did not check out (exit {proc.returncode}) after {elapsed:.1f} s:\n"
              + "\n".join(line for line in proc.stdout.splitlines() if line.startswith("   ")), flush=True)
        return None
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--before", default="aa6ad00")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="endstate-bench-before-") as tmp:
        before = Path(tmp) / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(before), options.before],
                       check=True)
        try:
            ids = sorted(_task_ids(before / "tasks-real") & _task_ids(ROOT / "tasks-real"))
            print(f"tasks check --suite tasks-real -j 2 over {len(ids)} task(s): {', '.join(ids)}")
            print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
            walls: dict[str, list[float]] = {"before": [], "after": []}
            for round_ in range(1, options.rounds + 1):
                pair = {}
                for side, checkout in (("before", before), ("after", ROOT)):
                    pair[side] = _check(checkout, ids)
                    if pair[side] is None:
                        print(f"round {round_} {side:6s} failed: round left out", flush=True)
                        break
                    print(f"round {round_} {side:6s} {pair[side]:7.1f} s", flush=True)
                else:
                    for side, wall in pair.items():
                        walls[side].append(wall)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(before)], check=False)
    print(f"load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if not walls["before"]:
        sys.exit("no round completed on both sides")
    ratios = [after / before for before, after in zip(walls["before"], walls["after"])]
    print("after/before by round: " + ", ".join(f"{r:.2f}" for r in ratios))
    a, b = statistics.median(walls["before"]), statistics.median(walls["after"])
    print(f"median wall: before {a:.1f} s ({options.before}), after {b:.1f} s (this checkout); "
          f"after/before = {b / a:.2f}")


if __name__ == "__main__":
    main()
