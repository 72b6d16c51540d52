"""Wall time of the suite's main jobs at -j 1 and -j 2 (or the -j given), tasks per hour, and the
share spent inside sandboxes.

    python bench/suite_timing.py                   # tasks check, live eval, replay, mutate
    python bench/suite_timing.py replay            # just one of them
    python bench/suite_timing.py replay -j 1,2,3,4 # tasks per hour as the workers grow

Prints one line per measurement (a task is one of the 22 a run graded; mutate's line counts the
suite once per mutant it ran, so its rate is not comparable with the others') and each -j's
speed-up over the first, all from this one run.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from _common import sandbox_share, timed

JOBS = {
    "check": lambda out, j: ("tasks", "check", "-j", j),
    "live": lambda out, j: ("eval", "--model", "scripted/reference", "-j", j, "--out", str(out)),
    "replay": lambda out, j: ("eval", "--model", "scripted/reference", "--replay", "cassettes/scripted-reference",
                              "-j", j, "--out", str(out)),
    "mutate": lambda out, j: ("mutate", "-j", j, "--out", str(out)),
}


def tasks_in(out: Path) -> int:
    """Task attempts the run graded (0 where the job writes no results, as `tasks check`)."""
    return sum(len(json.loads(path.read_text())["tasks"]) for path in out.rglob("results.json"))


def main(which: list[str], jobs: list[str]) -> None:
    for name in which or list(JOBS):
        times = {}
        for j in jobs:
            with tempfile.TemporaryDirectory() as tmp:
                elapsed, _ = timed(*JOBS[name](Path(tmp), j))
                inside, wall = sandbox_share(Path(tmp))
                graded = tasks_in(Path(tmp)) or (22 if name == "check" else 0)
            times[j] = elapsed
            share = f", {inside / wall:.0%} of task time inside sandbox calls" if wall else ""
            rate = f", {graded * 3600 / elapsed:5.0f} tasks/hour" if graded else ""
            print(f"{name:7s} -j {j}: {elapsed:6.1f} s{rate}{share}", flush=True)
        for j in jobs[1:]:
            print(f"{name:7s} speed-up -j {j} over -j {jobs[0]}: {times[jobs[0]] / times[j]:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Wall time of the suite's main jobs and tasks per hour.")
    parser.add_argument("which", nargs="*", metavar="JOB", help=f"any of {', '.join(JOBS)} (default all)")
    parser.add_argument("-j", "--jobs", default="1,2", help="the -j values to run, comma-separated (default 1,2)")
    args = parser.parse_args()
    if unknown := [name for name in args.which if name not in JOBS]:
        parser.error(f"no job {', '.join(unknown)}: give any of {', '.join(JOBS)}")
    main(args.which, [j.strip() for j in args.jobs.split(",") if j.strip()])
