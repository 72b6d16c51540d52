"""What grading in a fresh container costs: the replay of the reference cassettes with
the fresh grading container (made in the background while the agent works) against
the same replay grading in the agent's own container, interleaved, in one run.

    python bench/grading_container.py [ROUNDS] [-j N]

Both arms run the harness's own test entry point; the difference is the extra
container and copying the sealed tree into it. Prints each round's walls and the
ratio of the medians.
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
    rounds = int(argv[0]) if argv and argv[0].isdigit() else 2
    jobs = int(argv[argv.index("-j") + 1]) if "-j" in argv else 2
    fresh, shared = [], []
    for i in range(rounds):
        fresh.append(replay(Guards(), jobs))
        shared.append(replay(Guards(fresh_grading_container=False), jobs))
        print(f"round {i + 1}: fresh grading container {fresh[-1]:6.1f} s, agent's own container {shared[-1]:6.1f} s")
    ratio = statistics.median(fresh) / statistics.median(shared)
    print(f"22-task replay at -j {jobs}: fresh/own = {ratio:.2f}x (medians of {rounds} interleaved rounds)")


if __name__ == "__main__":
    main(sys.argv[1:])
