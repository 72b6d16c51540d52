"""What grading one task costs in CPU seconds, graded three ways: a figure that holds on a
loaded machine, where wall times of whole replays swing with everything else running.

    python bench/grading_cpu.py [ROUNDS] [TASK...]      # default 2 rounds, three bug-fix tasks

Grades each task's solution in a fresh grading container, as a run grades its end state:
- before: no twins, no probe, every test run started cold (grading as it was before them);
- now:    twins and probe, test runs forked from the warm entry point, the visible tests
          in the first held-out half's process where they can be (the default);
- cold:   twins and probe, every test run started cold.
Counts the CPU of the grading container's own processes (its cgroup) from staging to the
last verdict, plus this process's own, and prints the mean per task of each way.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from endstate.agent._state import Guards  # noqa: E402
from endstate.grading import Outcome, grade, prepare_grading_sandbox, seal_overlay, stage_holdout  # noqa: E402
from endstate.run._runner import resolve_graders  # noqa: E402
from endstate.sandbox import DEFAULT_IMAGE  # noqa: E402
from endstate.task import load_task  # noqa: E402
from endstate.task._task_sandbox import task_sandbox  # noqa: E402

ARMS = {"before": Guards(twins=False, outside_check=False, warm_start=False), "now": Guards(),
        "cold": Guards(warm_start=False)}
TASKS = ["bugfix-invoice-rounding", "bugfix-lru-eviction", "feature-recipe-scaling"]


def container_cpu(container_id: str) -> float:
    """CPU seconds the container's processes used so far (cgroup v1 or v2)."""
    v1 = Path(f"/sys/fs/cgroup/cpuacct/docker/{container_id}/cpuacct.usage")
    if v1.exists():
        return int(v1.read_text()) / 1e9
    for v2 in (Path(f"/sys/fs/cgroup/system.slice/docker-{container_id}.scope/cpu.stat"),
               Path(f"/sys/fs/cgroup/docker/{container_id}/cpu.stat")):
        if v2.exists():
            fields = dict(line.split() for line in v2.read_text().splitlines())
            return int(fields["usage_usec"]) / 1e6
    sys.exit(f"no CPU accounting found for container {container_id[:12]}")


def graded_cpu(task, guards: Guards) -> float:
    graders, where = resolve_graders(task), task_sandbox(task, "docker", DEFAULT_IMAGE)
    grading = guards
    with prepare_grading_sandbox("docker", where.image, where.limits, "cpu") as box:
        time.sleep(0.3)  # the sandbox's own start-up settles
        inside, here = container_cpu(box.container_id), time.process_time()
        sealed = seal_overlay(task.solution(), task.fixture(), box, grading)
        stage_holdout(sealed, task.holdout())
        verdicts = grade(sealed, graders, grading)
        time.sleep(0.3)  # what the last command started has ended
        used = container_cpu(box.container_id) - inside + time.process_time() - here
    failed = [name for name, v in verdicts if v.outcome is not Outcome.PASS]
    if failed:
        sys.exit(f"{task.id}'s solution did not pass ({failed}): the comparison would mean nothing")
    return used


def main(argv: list[str]) -> None:
    rounds = int(argv[0]) if argv else 2
    tasks = [load_task(ROOT / "tasks" / name) for name in (argv[1:] or TASKS)]
    used = {name: 0.0 for name in ARMS}
    for round_ in range(rounds):
        for task in tasks:
            for name, guards in ARMS.items():
                used[name] += graded_cpu(task, guards)
        print(f"round {round_ + 1} done", flush=True)
    n = rounds * len(tasks)
    for name in ARMS:
        print(f"{name:6s} {used[name] / n:.3f} CPU s per graded task ({used[name] / used['before']:.2f}x before)")


if __name__ == "__main__":
    main(sys.argv[1:])
