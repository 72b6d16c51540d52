"""What impossible twins cost a replay of the suite: wall time with and without them.

    python bench/twins_overhead.py [ROUNDS] [JOBS]      # default 3 rounds, -j 2

Replays the committed known-fix cassettes over the whole suite, alternating a run with
twins (the default: each held-out run split in two halves) and one without (the
`twins` guard off: one run of the real held-out tests), so that both see the same load.
Prints each run's wall, the medians and their ratio, and the median of each round's
own ratio (its two runs back to back: the steadier figure on a shared machine).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import msgspec

from endstate.agent import Guards
from endstate.suite import RunConfig, prepare_replay, run_suite
from endstate.task import load_suite

ROOT = Path(__file__).resolve().parents[1]


def replay(tasks, config: RunConfig) -> float:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        result = run_suite(tasks, config, Path(out), suite_root=ROOT / "tasks")
        elapsed = time.perf_counter() - start
    passed = sum(t.outcome == "pass" for t in result.tasks)
    if passed != len(tasks):
        sys.exit(f"the replay passed {passed}/{len(tasks)}: not a fair measure")
    return elapsed


def main(rounds: int, jobs: int) -> None:
    tasks, errors = load_suite(ROOT / "tasks")
    if errors:
        sys.exit(f"suite does not load: {errors}")
    base = RunConfig(model="scripted/reference", jobs=jobs, mode="replay",
                     cassettes=str(ROOT / "cassettes" / "scripted-reference"))
    tasks, base, problems = prepare_replay(tasks, base, set())
    if problems:
        sys.exit(f"cassettes do not replay: {problems}")
    arms = {"twins": base, "no twins": msgspec.structs.replace(base, guards=Guards(twins=False))}
    walls: dict[str, list[float]] = {name: [] for name in arms}
    for round_ in range(rounds):
        order = list(arms) if round_ % 2 == 0 else list(reversed(arms))
        for name in order:
            walls[name].append(replay(tasks, arms[name]))
            print(f"round {round_ + 1} {name:9s} {walls[name][-1]:6.1f} s", flush=True)
    with_twins, without = statistics.median(walls["twins"]), statistics.median(walls["no twins"])
    # Each round's two runs ran back to back, so their ratio shares the load of that moment.
    paired = statistics.median(a / b for a, b in zip(walls["twins"], walls["no twins"]))
    print(f"median wall, -j {jobs}: {with_twins:.1f} s with twins, {without:.1f} s without; "
          f"ratio of medians {with_twins / without:.3f}, median of each round's ratio {paired:.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3, int(sys.argv[2]) if len(sys.argv) > 2 else 2)
