"""What namespaces per process of the end state cost: a suite replay and `endstate mutate`, both
at -j 2, with this tree and with a tree from before them, interleaved in one run.

    git worktree add --detach /tmp/before <commit before the namespaces>
    python bench/isolation_cost.py /tmp/before [ROUNDS [FIRST]]     # FIRST: the first round's number (order)
    python bench/isolation_cost.py --per-run [RUNS]     # one test run, namespaces on and off

The tree from before runs from its own folder (its tasks, its cassettes) with its own package
first on PYTHONPATH; this tree runs from here. Each round runs both, in alternating order, so a
load that drifts over the run falls on both. Prints each wall time, the ratio after/before,
and mutate's wall per mutant (each tree's own mutant count: this one has one mutant more).

Measured on 2026-12-04, this tree (90e0ad8) against bb4aa9b, on 2 cores shared with five
other jobs (load average 8-25, moving minute to minute). Three runs, interleaved:

    run  job     before (s)              after (s)
    A    replay  162.9                   194.7        (my grading tests ran during all of A and
    A    mutate  165.4                   179.7         the first half of B, "after" replay included)
    B    replay   96.9                   171.4
    B    mutate   66.4                    71.8
    C    replay  113.4, 35.6              80.4, 42.0
    C    mutate   31.2, 44.1              43.4, 50.1

    replay -j 2, pooled: 408.8 s -> 488.5 s (x1.195); without B's pair: 311.9 -> 317.1 (x1.017)
    mutate -j 2, pooled: 307.1 s -> 345.0 s (x1.123); per mutant 5.48 s (14) -> 5.75 s (15), +4.9%
    quietest pair (C, round 2): replay x1.18, mutate x1.14

Single pairs range from x0.82 to x1.77: the load, not the change, dominates them.

Measured again on 2026-12-04 18:29-18:48 UTC, with bounded writes (a tmpfs mounted and
dropped per graded run), regrades and visible-only runs hidden from the held-out files
(branch wave5-32), against bb4aa9b, one interleaved round, load average 32-36 on 2 cores:

    replay -j 2: before 259.9 s, after 267.7 s, x1.030 (22/22 pass both)
    mutate -j 2: before 222.5 s, after 243.8 s, x1.096 (14 of 14 and 15 of 15 killed)
    per mutant:  15.9 s -> 16.3 s (+2.3%) The
per-run comparison (--per-run 10, load 9) is the sharper figure: a cold one-test run,
median 348 ms -> 459 ms (the isolation program's Python start and imports, 50-90 ms of it);
a warm run, 447 ms -> 423 ms (no cost seen). A task's graded processes are one cold probe
and warm pytest runs, so a replay pays about 0.1 s of wall per task.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _timed(tree: Path, *args: str) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree))
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "endstate", *args], cwd=tree, env=env, capture_output=True,
                          text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"endstate {' '.join(args)} in {tree} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    summary = [line for line in proc.stdout.splitlines() if line.strip()][-2:]  # mutate: how many were killed
    print(f"  ({' | '.join(summary)[:300]}; exit {proc.returncode})", flush=True)
    return elapsed


def _mutants(tree: Path) -> int:
    code = "from endstate.checks._mutation import MUTANTS; print(len(MUTANTS))"
    env = dict(os.environ, PYTHONPATH=str(tree))
    return int(subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True,
                              check=True).stdout)


def _jobs(out: Path) -> dict[str, tuple[str, ...]]:
    return {"replay": ("eval", "--model", "scripted/reference", "--replay", "cassettes/scripted-reference",
                       "-j", "2", "--out", str(out / "replay")),
            "mutate": ("mutate", "-j", "2", "--out", str(out / "mutate"))}


def per_run(runs: int) -> None:
    """Wall of one small warm and one cold test run in one grading container, with and without
    namespaces of its own, alternating; medians."""
    from statistics import median

    from endstate.grading import prepare_grading_sandbox, seal_overlay, stage_holdout
    from endstate.grading._testrun import run_tests, start_warm_runner
    from endstate.sandbox import DEFAULT_IMAGE, FileEntry, SandboxLimits

    tree = {"tests/test_one.py": FileEntry(0o644, b"def test_one():\n    assert 1 + 1 == 2\n")}
    walls: dict[tuple[str, bool], list[float]] = {}
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(command_timeout_s=120), "bench") as box:
        sealed = seal_overlay(dict(tree), {}, box)
        stage_holdout(sealed, {})
        for kind in ("cold", "warm"):
            if kind == "warm":
                start_warm_runner(sealed)
            for i in range(2 * runs):
                sealed.process_isolation = isolated = i % 2 == 0
                start = time.perf_counter()
                run = run_tests(sealed, "python -m pytest -q tests")
                walls.setdefault((kind, isolated), []).append(time.perf_counter() - start)
                assert run.tests == 1 and run.failures == 0, run
    for (kind, isolated), values in sorted(walls.items()):
        print(f"{kind} run, {'own namespaces' if isolated else 'shared':14s}: median {median(values) * 1000:.0f} ms "
              f"over {len(values)}")


def main(before: Path, rounds: int, first: int = 0) -> None:
    trees = {"before": before.resolve(), "after": ROOT}
    walls: dict[tuple[str, str], list[float]] = {}
    for round_ in range(first, first + rounds):
        for job in ("replay", "mutate"):
            order = ["before", "after"] if (round_ + (job == "mutate")) % 2 == 0 else ["after", "before"]
            for which in order:
                with tempfile.TemporaryDirectory() as tmp:
                    elapsed = _timed(trees[which], *_jobs(Path(tmp))[job])
                walls.setdefault((job, which), []).append(elapsed)
                print(f"round {round_ + 1} {job} -j 2 {which:6s} {elapsed:7.1f} s", flush=True)
    counts = {which: _mutants(tree) for which, tree in trees.items()}
    for job in ("replay", "mutate"):
        before_s, after_s = (sum(walls[(job, w)]) / len(walls[(job, w)]) for w in ("before", "after"))
        print(f"{job} -j 2: before {before_s:.1f} s, after {after_s:.1f} s, after/before {after_s / before_s:.3f}")
    for which in ("before", "after"):
        mean = sum(walls[("mutate", which)]) / len(walls[("mutate", which)])
        print(f"mutate {which}: {counts[which]} mutants, {mean / counts[which]:.1f} s per mutant")


if __name__ == "__main__" and sys.argv[1:2] == ["--per-run"]:
    per_run(int(sys.argv[2]) if len(sys.argv) > 2 else 10)
elif __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 1, int(sys.argv[3]) if len(sys.argv) > 3 else 0)
