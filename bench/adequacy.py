"""`endstate tasks adequacy`: the wall per task, and per graded tree, measured in one run.

Each task is measured on its own (its rows `-j` at a time), so a task's wall is its own:
its sandbox resolved (its image built if it has one and the engine lacks it), every
mutant and every right fix graded. Prints the figures; asserts nothing.

    python bench/adequacy.py [--suite tasks] [--suite tasks-real] [--task ID ...] [-j 2]
    python bench/adequacy.py --from run.json    # the figures of a run already made (--json)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _measure(suite: str, tasks: list[str], jobs: int) -> tuple[list[dict], float]:
    with tempfile.TemporaryDirectory(prefix="endstate-bench-adequacy-") as tmp:
        out = Path(tmp) / "adequacy.json"
        args = ["tasks", "adequacy", "--suite", suite, "-j", str(jobs), "--json", str(out)]
        for task in tasks:
            args += ["--task", task]
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "endstate", *args], cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if proc.returncode not in (0, 1) or not out.is_file():
            sys.exit(f"endstate {' '.join(args)} failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
        return json.loads(out.read_text()), wall


def _print(reports: list[dict]) -> None:
    print(f"{'task':42s} {'made':>5s} {'killed':>6s} {'surv':>5s} {'equiv':>5s} {'rate':>6s} "
          f"{'graded':>6s} {'wall s':>7s} {'s/tree':>6s}")
    total_graded = total_wall = 0.0
    for r in reports:
        count = {o: sum(m["outcome"] == o for m in r["mutants"]) for o in ("killed", "survived", "equivalent")}
        judged = len(r["mutants"]) - count["equivalent"]
        graded = judged + len(r["right"])
        total_graded, total_wall = total_graded + graded, total_wall + r["wall_s"]
        rate = f"{count['killed'] / judged:.0%}" if judged else "n/a"
        print(f"{r['task_id']:42s} {len(r['mutants']):5d} {count['killed']:6d} {count['survived']:5d} "
              f"{count['equivalent']:5d} {rate:>6s} {graded:6d} {r['wall_s']:7.1f} "
              f"{r['wall_s'] / graded if graded else 0:6.2f}")
    print(f"{len(reports)} task(s): {int(total_graded)} tree(s) graded in {total_wall:.1f} s of task wall")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", action="append", default=[])
    parser.add_argument("--task", action="append", default=[])
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--from", dest="from_file", type=Path, default=None)
    options = parser.parse_args()
    if options.from_file:
        _print(json.loads(options.from_file.read_text()))
        return
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    for suite in options.suite or ["tasks"]:
        reports, wall = _measure(suite, options.task, options.jobs)
        print(f"\ntasks adequacy --suite {suite} -j {options.jobs}: {wall:.1f} s in all")
        _print(reports)
    print(f"load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
