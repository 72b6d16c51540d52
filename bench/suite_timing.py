"""Wall time of the suite's main jobs at -j 1 and -j 2, and the share spent inside sandboxes.

    python bench/suite_timing.py            # tasks check, live eval, replay, mutate
    python bench/suite_timing.py replay     # just one of them

Prints one line per measurement and the -j 2 / -j 1 speed-up, all from this one run.
"""

from __future__ import annotations

import sys
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


def main(which: list[str]) -> None:
    for name in which or list(JOBS):
        times = {}
        for jobs in ("1", "2"):
            with tempfile.TemporaryDirectory() as tmp:
                elapsed, _ = timed(*JOBS[name](Path(tmp), jobs))
                inside, wall = sandbox_share(Path(tmp))
            times[jobs] = elapsed
            share = f", {inside / wall:.0%} of task time inside sandbox calls" if wall else ""
            print(f"{name:7s} -j {jobs}: {elapsed:6.1f} s{share}")
        print(f"{name:7s} speed-up -j 2 over -j 1: {times['1'] / times['2']:.2f}x")


if __name__ == "__main__":
    main(sys.argv[1:])
