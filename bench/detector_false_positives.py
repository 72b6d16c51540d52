"""How often the detectors fire on honest end states: every shipped solution and honest fix.

    python bench/detector_false_positives.py [--hacks]
    python bench/detector_false_positives.py --dataset PARQUET --repos DIR

Runs every detector (endstate/grading/_detect.py) over each task's solution and alternative
solutions (tasks/, tasks-real/) and over the upstream fixes of the SWE-bench test data
(tests/data/swebench: each instance's `patch`, then `patch` with its `test_patch`, applied to its
base commit out of boltons.bundle). Prints each finding (a false positive: these are honest),
then the count. `--hacks` also prints what fires on each task's hack overlays (which should).

`--dataset` reads a SWE-bench parquet file instead (e.g. SWE-bench Verified's test.parquet) and,
for each record whose repository has a clone in `--repos` (owner__name), runs the detectors over
its `patch`, and its `patch` with its `test_patch`, applied at its base commit; it prints each
finding and the counts by kind.
"""

from __future__ import annotations

import argparse
import collections
import io
import json
import subprocess
import sys
import tarfile
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


def _archive(repo: Path, commit: str) -> Tree:
    data = subprocess.run(["git", "-C", str(repo), "archive", commit], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return {m.name: FileEntry(0o644, tar.extractfile(m).read())  # type: ignore[union-attr]
                for m in tar.getmembers() if m.isfile()}


def _patched(fixture: Tree, patch: str, scratch: Path) -> Tree | None:
    """`fixture` with `patch` applied (None when it does not apply)."""
    paths = [line.split(" b/", 1)[1] for line in patch.splitlines() if line.startswith("diff --git ")]
    olds = [line.split(" a/", 1)[1].split(" b/", 1)[0] for line in patch.splitlines() if line.startswith("diff --git ")]
    with tempfile.TemporaryDirectory(dir=scratch) as folder:
        work = Path(folder)
        for path in olds:
            if path in fixture:
                (work / path).parent.mkdir(parents=True, exist_ok=True)
                (work / path).write_bytes(fixture[path].data)
        applied = subprocess.run(["git", "apply", "--unsafe-paths", "-"], cwd=work,
                                 input=patch.encode(), capture_output=True)
        if applied.returncode:
            return None
        end = {p: e for p, e in fixture.items() if p not in olds}
        end.update({p: FileEntry(0o644, (work / p).read_bytes()) for p in set(olds) | set(paths)
                    if (work / p).is_file()})
        return end


def dataset_end_states(parquet: Path, repos: Path, scratch: Path) -> Iterator[tuple[str, str, Tree, Tree]]:
    """(instance, "patch" or "patch+test_patch", fixture, end state) of each record of a SWE-bench
    parquet file whose repository `repos` holds a clone of."""
    import pyarrow.parquet as pq

    for record in pq.read_table(parquet, columns=["instance_id", "repo", "base_commit", "patch",
                                                  "test_patch"]).to_pylist():
        repo = repos / record["repo"].replace("/", "__")
        if not repo.is_dir():
            continue
        try:
            fixture = _archive(repo, record["base_commit"])
        except subprocess.CalledProcessError:
            print(f"SKIPPED {record['instance_id']}: base commit not in {repo}")
            continue
        for name, patch in (("patch", record["patch"]), ("patch+test_patch",
                                                         record["patch"] + "\n" + record["test_patch"])):
            end = _patched(fixture, patch, scratch)
            if end is None:
                print(f"SKIPPED {record['instance_id']} {name}: does not apply")
                continue
            yield record["instance_id"], name, fixture, end


def _dataset(parquet: Path, repos: Path) -> None:
    if not parquet.is_file() or not repos.is_dir():
        sys.exit(f"error: {parquet if not parquet.is_file() else repos} not found: give a SWE-bench parquet file "
                 "and a folder of owner__name clones")
    kinds: collections.Counter[tuple[str, str]] = collections.Counter()
    ends: collections.Counter[str] = collections.Counter()
    fired: collections.Counter[str] = collections.Counter()
    with tempfile.TemporaryDirectory() as scratch:
        for instance, name, fixture, end in dataset_end_states(parquet, repos, Path(scratch)):
            ends[name] += 1
            findings = detect_trees(fixture, end)
            fired[name] += bool(findings)
            for finding in findings:
                kinds[(name, finding.kind)] += 1
                print(f"FIRED {instance} {name}: {finding.kind} {finding.path}:{finding.line} {finding.lines[:2]}",
                      flush=True)
    for name in ("patch", "patch+test_patch"):
        counts = ", ".join(f"{kind} {n}" for (mode, kind), n in sorted(kinds.items()) if mode == name) or "none"
        print(f"{name}: {fired[name]} of {ends[name]} end state(s) fired ({counts})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hacks", action="store_true", help="also print what fires on each hack overlay")
    parser.add_argument("--dataset", type=Path, help="a SWE-bench parquet file: count what fires on its fixes")
    parser.add_argument("--repos", type=Path, help="with --dataset: the folder of owner__name clones")
    args = parser.parse_args()
    if args.dataset is not None or args.repos is not None:
        if args.dataset is None or args.repos is None:
            parser.error("--dataset and --repos go together")
        _dataset(args.dataset, args.repos)
        return
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
