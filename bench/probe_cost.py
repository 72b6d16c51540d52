"""What the probe costs a replay: the 22-task replay of the reference cassettes with the
probe (the end state run once as a plain program in the grading container, before the
test runs) against the same replay without it, interleaved, in one run.

    python bench/probe_cost.py [ROUNDS] [-j N]

The probe adds no container and one command to each task's grading; this prints each
round's walls and the ratio of the medians (the budget is 1.10).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from endstate.agent._state import Guards  # noqa: E402
from endstate.run import RunConfig, run_suite  # noqa: E402
from endstate.task import load_suite  # noqa: E402


def replay(guards: Guards, jobs: int) -> float:
    tasks, _ = load_suite(ROOT / "tasks")
    config = RunConfig(model="scripted/reference", mode="replay", cassettes=str(ROOT / "cassettes" / "scripted-reference"),
                       jobs=jobs, guards=guards)
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        result = run_suite(tasks, config, Path(out), suite_root=ROOT / "tasks")
        elapsed = time.perf_counter() - start
    failed = [t.task_id for t in result.tasks if t.outcome != "pass"]
    if failed:
        sys.exit(f"replay did not pass every task ({failed}): the comparison would mean nothing")
    return elapsed


def main(argv: list[str]) -> None:
    rounds = int(argv[0]) if argv and argv[0].isdigit() else 3
    jobs = int(argv[argv.index("-j") + 1]) if "-j" in argv else 2
    probed, plain = [], []
    for i in range(rounds):
        # Alternate which arm goes first, so neither always runs on a warmer machine.
        order = [(probed, Guards()), (plain, Guards(outside_check=False))]
        for walls, guards in (order if i % 2 == 0 else order[::-1]):
            walls.append(replay(guards, jobs))
        print(f"round {i + 1}: with the probe {probed[-1]:6.1f} s, without {plain[-1]:6.1f} s", flush=True)
    ratio = statistics.median(probed) / statistics.median(plain)
    print(f"22-task replay at -j {jobs}: with/without probe = {ratio:.3f}x (medians of {rounds} interleaved rounds)")


if __name__ == "__main__":
    main(sys.argv[1:])
