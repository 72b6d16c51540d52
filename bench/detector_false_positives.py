"""How often the detectors fire on honest end states: every shipped solution and honest fix.

    python bench/detector_false_positives.py [--hacks]

Runs every detector (endstate/grading/_detect.py) over each task's solution and alternative
solutions (tasks/, tasks-real/) and over the upstream fixes of the SWE-bench test data
(tests/data/swebench: each instance's `patch`, then `patch` with its `test_patch`, applied to its
base commit out of boltons.bundle). Prints each finding (a false positive: these are honest),
then the count. `--hacks` also prints what fires on each task's hack overlays (which should).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from endstate.grading._detect import detect_trees
from endstate.sandbox import FileEntry, Tree
from endstate.task import load_task

ROOT = Path(__file__).resolve().parent.parent
SWEBENCH = ROOT / "tests" / "data" / "swebench"


def _tasks() -> Iterator:
    for top in ("tasks", "tasks-real"):
        for folder in sorted((ROOT / top).iterdir()):
            if (folder / "task.toml").is_file():
                yield load_task(folder)


def _git(repo: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True, text=True,
                          check=True).stdout


def _worktree(repo: Path) -> Tree:
    return {p: FileEntry(0o644, (repo / p).read_bytes()) for p in _git(repo, "ls-files").splitlines()
            if (repo / p).is_file()}


def _swebench(scratch: Path) -> Iterator[tuple[str, Tree, Tree]]:
    repo = scratch / "boltons"
    subprocess.run(["git", "clone", "-q", str(SWEBENCH / "boltons.bundle"), str(repo)], check=True,
                   capture_output=True)
    for line in (SWEBENCH / "instances.jsonl").read_text(encoding="utf-8").splitlines():
        instance = json.loads(line)
        for name, patches in (("patch", [instance["patch"]]), ("patch+test_patch",
                                                              [instance["patch"], instance["test_patch"]])):
            _git(repo, "checkout", "-q", "-f", instance["base_commit"])
            _git(repo, "clean", "-q", "-fdx")
            fixture = _worktree(repo)
            for patch in patches:
                _git(repo, "apply", "-", stdin=patch)
            yield f"swebench {instance['instance_id']} {name}", fixture, _worktree(repo)


def honest_end_states(scratch: Path) -> Iterator[tuple[str, Tree, Tree]]:
    """(what, fixture, end state) of every shipped honest end state."""
    for task in _tasks():
        fixture = task.fixture()
        yield f"{task.root.parent.name}/{task.id} solution", fixture, task.solution()
        for name, tree in task.alternatives().items():
            yield f"{task.root.parent.name}/{task.id} solutions/{name}", fixture, tree
    yield from _swebench(scratch)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hacks", action="store_true", help="also print what fires on each hack overlay")
    args = parser.parse_args()
    ends = findings = 0
    with tempfile.TemporaryDirectory() as scratch:
        for what, fixture, end in honest_end_states(Path(scratch)):
            ends += 1
            for finding in detect_trees(fixture, end):
                findings += 1
                print(f"FALSE POSITIVE {what}: {finding.kind} {finding.path}:{finding.line} {finding.lines[:2]}")
    print(f"{findings} finding(s) over {ends} honest end state(s)")
    if args.hacks:
        for task in _tasks():
            for name, hack in task.hacks().items():
                if hack.tree is not None:
                    kinds = sorted({f.kind for f in detect_trees(task.fixture(), hack.tree)})
                    print(f"hack {task.id}/{name}: {', '.join(kinds) or '-'}")
    sys.exit(1 if findings else 0)


if __name__ == "__main__":
    main()
