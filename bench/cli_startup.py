"""How long endstate takes to start: `endstate --help`, and importing the agent package.

    python bench/cli_startup.py [--rounds N]

Each round runs, interleaved, `python -c pass` (the interpreter alone), `endstate --help`
and `python -c "import endstate.agent"`, each in a fresh process. Prints the median
wall time of each and what endstate adds to the bare interpreter. The target for
`--help` is 150 ms on an idle machine; on a loaded one read the added time.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "endstate --help": [sys.executable, "-m", "endstate", "--help"],
    "import endstate.agent": [sys.executable, "-c", "import endstate.agent"],
}


def once(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for name, argv in COMMANDS.items():
        once(argv)  # warm the file cache
    for _ in range(args.rounds):
        for name, argv in COMMANDS.items():
            times[name].append(once(argv))
    bare = statistics.median(times["python -c pass"])
    for name, samples in times.items():
        median = statistics.median(samples)
        added = "" if name == "python -c pass" else f"  (+{(median - bare) * 1000:.0f} ms over the bare interpreter)"
        print(f"{name:24s} median {median * 1000:6.0f} ms  min {min(samples) * 1000:6.0f} ms{added}")


if __name__ == "__main__":
    main()
