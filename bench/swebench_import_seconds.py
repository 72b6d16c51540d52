"""Seconds of work per SWE-bench instance: `tasks import swebench` (make + check of the gold patch).

    python bench/swebench_import_seconds.py DATASET --repos CLONES [-j N] [--rounds 2] [-- IMPORT OPTIONS]

Runs the import `--rounds` times over the same dataset (the first builds images and fetches
wheels; the last runs with those caches warm), each into a fresh folder under /tmp, and reads the
line each instance gets as it is settled (`ok ID N s`: its making, then its check's image and rows,
summed). Prints, for the last round, each instance's seconds and outcome, the median over those
that checked out, the wall per instance times -j, and SWE-bench's own figure beside them (Epoch
AI: Verified's 500 instances in 62 minutes on 32 cores, about 240 core-seconds each).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time

SWEBENCH_CORE_SECONDS = 62 * 60 * 32 / 500
_SETTLED = re.compile(r"^(ok|refused)\s+(\S+)\s+(\d+) s(?:\s+(.*))?$")


def one_round(args: argparse.Namespace, extra: list[str]) -> tuple[list[tuple[str, str, int, str]], float, str]:
    with tempfile.TemporaryDirectory(prefix="swebench-seconds-") as out:
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "endstate", "tasks", "import", "swebench", args.dataset,
                               "--repos", args.repos, "--out", out, "-j", str(args.jobs), "--no-adequacy", *extra],
                              capture_output=True, text=True)
        wall = time.monotonic() - started
    settled = [(m[1], m[2], int(m[3]), (m[4] or "")[:120]) for m in map(_SETTLED.match, done.stdout.splitlines()) if m]
    summary = next((line for line in done.stdout.splitlines() if line.startswith("checked out ")), done.stderr[-300:])
    return settled, wall, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("--repos", required=True)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    args, extra = parser.parse_known_args()
    extra = [word for word in extra if word != "--"]
    for number in range(1, args.rounds + 1):
        settled, wall, summary = one_round(args, extra)
        print(f"round {number}: {wall:.0f} s wall, {summary}")
    for outcome, instance, seconds, cause in settled:
        print(f"  {outcome:8s} {instance:40s} {seconds:6d} s  {cause}")
    ok = [seconds for outcome, _, seconds, _ in settled if outcome == "ok"]
    if ok:
        print(f"seconds of work per instance checked out (last round): median {statistics.median(ok):.0f}, "
              f"{min(ok)}-{max(ok)}; SWE-bench's harness: {SWEBENCH_CORE_SECONDS:.0f} core-seconds "
              f"(median / theirs = {statistics.median(ok) / SWEBENCH_CORE_SECONDS:.1f})")
    if settled:
        print(f"wall x -j per instance (last round): {wall * args.jobs / len(settled):.0f} s")


if __name__ == "__main__":
    main()
