"""What grading a root Harbor task with a service costs: the verifier of a spool service (the shape of
tests/data/harbor-root/sh-greet-spool) graded in a fresh grading container, its sealed service started
again there first, timed from the grade call to its verdict (the container is made beforehand, as a
run makes it while the agent works).

    python bench/root_grading.py [ROUNDS] [BEFORE_TREE]     # default 5 rounds

With BEFORE_TREE (another checkout of endstate, say a worktree of main), each round grades once
with that tree's code and once with this one's, in a rotating order, each in a process of its
own, and the ratio of the medians (this / before) is printed: it uses only names both trees have.
The settle before the verifier (5 s) is most of the figure, on both.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

if not os.environ.get("PYTHONPATH"):  # run as a script: this tree's endstate
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from endstate.grading import Outcome, grade, prepare_grading_sandbox, resolve, seal_overlay, stage_holdout  # noqa: E402
from endstate.guards import Guards  # noqa: E402
from endstate.sandbox import DEFAULT_IMAGE, SandboxLimits, build_image  # noqa: E402
from endstate.sandbox._services import Process  # noqa: E402
from endstate.sandbox._tree import FileEntry  # noqa: E402

GREETD = ("mkdir -p /var/spool/greet/in /var/spool/greet/out; while :; do for r in /var/spool/greet/in/*; do "
          "[ -f \"$r\" ] || continue; printf 'hello, %s\\n' \"$(cat \"$r\")\" > /var/spool/greet/out/${r##*/}; "
          "rm -f \"$r\"; done; sleep 0.2; done")
TEST_SH = b"""#!/bin/bash
mkdir -p /logs/verifier
echo ada > /var/spool/greet/in/probe
for _ in $(seq 1 50); do [ -f /var/spool/greet/out/probe ] && break; sleep 0.2; done
[ "$(cat /var/spool/greet/out/probe 2>/dev/null)" = "hello, ada" ] && echo 1 > /logs/verifier/reward.txt
"""
VERIFIER = resolve("endstate.grading:verifier", {"script": ".harbor/tests/test.sh", "timeout": 60})


def service() -> Process:
    extra = {"exe": "/usr/bin/bash"} if "exe" in Process.__struct_fields__ else {}
    return Process(["bash", "-c", GREETD], "/", 0, 0, {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}, **extra)


def one() -> float:
    tree = {"state": FileEntry(0o644, b"ready\n")}
    with prepare_grading_sandbox("docker", DEFAULT_IMAGE, SandboxLimits(agent_uid=0), "bench-root") as box:
        sealed = seal_overlay(tree, tree, box)
        stage_holdout(sealed, {".harbor/tests/test.sh": FileEntry(0o755, TEST_SH)}, [VERIFIER])
        sealed.processes = [service()]
        start = time.perf_counter()
        ((_, verdict),) = grade(sealed, [VERIFIER], Guards(end_state_checks=False))
        elapsed = time.perf_counter() - start
    if verdict.outcome is not Outcome.PASS:
        sys.exit(f"the service's verifier did not pass ({verdict.reason}): the figure would mean nothing")
    return elapsed


def _timed(tree: Path) -> float:
    """One grading, in a process that imports endstate from `tree`."""
    ran = subprocess.run([sys.executable, __file__, "--one"], env={**os.environ, "PYTHONPATH": str(tree)},
                         capture_output=True, text=True, check=False)
    if ran.returncode != 0:
        sys.exit(f"grading with {tree} failed: {ran.stderr[-1000:]}")
    return float(ran.stdout.split()[-1])


def main() -> None:
    if sys.argv[1:] == ["--one"]:
        print(f"{one():.3f}")
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    trees = {"now": Path(__file__).resolve().parents[1]}
    if len(sys.argv) > 2:
        trees["before"] = Path(sys.argv[2]).resolve()
    build_image(DEFAULT_IMAGE)
    walls: dict[str, list[float]] = {name: [] for name in trees}
    for n in range(rounds):
        order = list(trees) if n % 2 == 0 else list(reversed(trees))
        for name in order:
            walls[name].append(_timed(trees[name]))
        print(f"round {n + 1}: " + ", ".join(f"{name} {walls[name][-1]:.2f} s" for name in trees))
    medians = {name: statistics.median(w) for name, w in walls.items()}
    print("median grading of a root task with a service: " + ", ".join(f"{n} {m:.2f} s" for n, m in medians.items()))
    if "before" in medians:
        print(f"now/before: {medians['now'] / medians['before']:.3f}")


if __name__ == "__main__":
    main()
