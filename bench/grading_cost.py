"""What the evidence the agent cannot tell apart costs a replay: the 22-task replay of the
reference cassettes graded three ways, interleaved, in one run.

    python bench/grading_cost.py [ROUNDS] [-j N]        # default 3 rounds, -j 2

- before: no twins, no probe, every test run started cold: grading as it was before them;
- now:    twins and probe, test runs forked from the warm entry point (the default);
- cold:   twins and probe, every test run started cold (what the warm start saves).

Each round runs the three back to back, in a rotating order, so that the machine's load
drifts over all of them alike. Prints each run's wall, each round's now/before ratio
(the steadier figure on a shared machine), and the ratio of the medians. The budget for
now/before is 1.10.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from probe_cost import replay  # noqa: E402  (the same replay of the reference cassettes, one way graded)

from endstate.agent._state import Guards  # noqa: E402

ARMS = {
    "before": Guards(twins=False, outside_check=False, warm_start=False),
    "now": Guards(),
    "cold": Guards(warm_start=False),
}


def main(argv: list[str]) -> None:
    jobs = int(argv[argv.index("-j") + 1]) if "-j" in argv else 2
    rest = [a for i, a in enumerate(argv) if a != "-j" and (i == 0 or argv[i - 1] != "-j")]
    rounds = int(rest[0]) if rest else 3
    walls: dict[str, list[float]] = {name: [] for name in ARMS}
    names = list(ARMS)
    for round_ in range(rounds):
        for name in names[round_ % 3:] + names[:round_ % 3]:
            walls[name].append(replay(ARMS[name], jobs))
            print(f"round {round_ + 1} {name:6s} {walls[name][-1]:6.1f} s   load {os.getloadavg()[0]:5.2f}", flush=True)
        print(f"round {round_ + 1}: now/before {walls['now'][-1] / walls['before'][-1]:.3f}, "
              f"cold/before {walls['cold'][-1] / walls['before'][-1]:.3f}", flush=True)
    medians = {name: statistics.median(w) for name, w in walls.items()}
    paired = statistics.median(n / b for n, b in zip(walls["now"], walls["before"]))
    print(f"-j {jobs}, {rounds} rounds, median walls: before {medians['before']:.1f} s, now {medians['now']:.1f} s, "
          f"cold {medians['cold']:.1f} s")
    print(f"now/before: ratio of medians {medians['now'] / medians['before']:.3f}, median of the rounds' ratios "
          f"{paired:.3f} (budget 1.10); cold/before {medians['cold'] / medians['before']:.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
