"""End-to-end runs of the real CLI, in subprocesses, against a real Docker engine."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from cli_runner import Ran, finish, start_endstate

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "tasks"
CASSETTES = ROOT / "cassettes"


def fingerprint(out: Path) -> list[tuple[str, str, str]]:
    """Each finished task of a run folder: id, outcome and sealed tree hash, in the results' order."""
    path = out / "results.json"
    tasks = json.loads(path.read_text())["tasks"] if path.exists() else []
    return [(t["task_id"], t["outcome"], t["tree_hash"]) for t in tasks]


def wait_for_a_finished_task(out: Path, proc: subprocess.Popen, seconds: float = 300) -> None:
    """Until the run writing to `out` has a finished task in its results, or its process ended."""
    results = out / "results.json"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and proc.poll() is None:
        if results.exists() and json.loads(results.read_text())["tasks"]:
            return
        time.sleep(0.1)


def sample_and_the_others(everything: list[str], sample: list[str]) -> list:
    """The two parameters of a check over a shipped suite: the sample `make test` runs, and the
    others, marked `content` (`make check-tasks`); CI runs both, so each item is checked once."""
    others = [item for item in everything if item not in sample]
    return [pytest.param(sample, id="sample"), pytest.param(others, id="the-others", marks=pytest.mark.content)]


#: The tasks the kill, restart and fault tests disturb a replay of the reference arm on.
DISTURBED = ["bugfix-invoice-rounding", "bugfix-lru-eviction", "feature-recipe-scaling", "refactor-dedupe-validators"]


def endstate_with_pid(*args: str, timeout: float = 1200) -> tuple[Ran, int]:
    """As `run_endstate`, with the process id its sandboxes are labelled with (their owner)."""
    proc = start_endstate(*args)
    return finish(proc, timeout), proc.pid


def check_out(ran: Ran) -> None:
    """Fail with every failed row of a `tasks check` in full (an assertion message is shortened)."""
    if ran.code != 0:
        failed = [line for line in ran.out.splitlines() if line.startswith(("FAIL", "       "))]
        pytest.fail(f"tasks check exited {ran.code}:\n" + "\n".join(failed) + "\n" + ran.err[-2000:], pytrace=False)


DISK_FILL_STEPS = [
    "dd if=/dev/zero of=/tmp/fill bs=1M count=2048",  # 2 GiB into /tmp: stops at its tmpfs size
    "dd if=/dev/zero of=big bs=1M count=2048",  # 2 GiB into one file: stops at the file-size limit
    "for i in $(seq 1 12); do dd if=/dev/zero of=fill-$i bs=1M count=256; done",  # 3 GiB more: the ceiling
]


def disk_fill_suite(root: Path) -> Path:
    """A one-task suite whose reference trajectory tries to write several GiB into /tmp and the workspace."""
    import shutil

    source = TASKS / "bugfix-lru-eviction"
    task = root / "disk-fill"
    shutil.copytree(source, task, ignore=shutil.ignore_patterns("reference.toml", "hacks"))
    manifest = task / "task.toml"
    manifest.write_text(manifest.read_text().replace('id = "bugfix-lru-eviction"', 'id = "disk-fill"'))
    steps = "".join(f'[[steps]]\ncalls = [{{ tool = "bash", args = {{ command = "{c}" }} }}]\n\n'
                    for c in DISK_FILL_STEPS)
    (task / "reference.toml").write_text(steps + '[[steps]]\nsay = "done"\n')
    return root
