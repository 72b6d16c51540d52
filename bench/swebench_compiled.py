"""A seeded sample of SWE-bench Verified's compiled projects (or of `--repo`), ready for `endstate tasks import swebench`.

`--per-version` records per (repository, version) of astropy, matplotlib and scikit-learn, drawn with a
seed. astropy is read from its clone as published. matplotlib, scikit-learn and Django could not be cloned
here, so each of their records gets a stand-in: a PyPI sdist of the project (`--sdists`: `name-X.Y.Z.tar.gz`
files, the name's case as PyPI has it; Django's sdists hold its tests) committed to a bare repository under
`--repos`, then the record's gold `patch` and `test_patch` reverse-applied (`git apply -R`) as the base
commit; `base_commit` and `environment_setup_commit` are rewritten to it. The sdists of the record's own
version are tried first. A record none of the sdists takes both patches back from is passed over for the
next one of its version (seeded order). Figures on stand-ins are not figures on the real base commits: a
release tree is not the development tree the fix was made on.

    python bench/swebench_compiled.py VERIFIED.parquet --sdists DIR --repos DIR --out sample.jsonl
    python bench/swebench_compiled.py VERIFIED.parquet --repo django/django --per-version 2 ...
    endstate tasks import swebench sample.jsonl --repos DIR -j 1 --no-adequacy --out OUT

Each build's seconds, and how many of its compilations ccache answered, are on the import's
`the build wrote ...` lines.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import itertools
import json
import os
import random
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

GIT = ["git", "-c", "user.name=standin", "-c", "user.email=standin@example.invalid", "-c", "safe.directory=*"]
COMPILED = ("astropy/astropy", "matplotlib/matplotlib", "scikit-learn/scikit-learn")
CLONED = {"astropy/astropy"}


def git(repo: Path, *args: str, stdin: bytes | None = None, check: bool = True, day: str = "") -> subprocess.CompletedProcess:
    """`day` (ISO 8601): the commit's author and committer date, else now."""
    env = {**os.environ, "GIT_AUTHOR_DATE": day, "GIT_COMMITTER_DATE": day} if day else None
    return subprocess.run([*GIT, "-C", str(repo), *args], input=stdin, capture_output=True, check=check, env=env)


class Sdists:
    """Each sdist unpacked once into a git work tree, its release the one commit."""

    def __init__(self, folder: Path, scratch: Path):
        self.folder, self.scratch, self.trees = folder, scratch, {}
        #: Each unpacked tree's release day (its newest file's time): its commits are dated then, as the import
        #: resolves the dependencies "as of the commit's date".
        self.days: dict[Path, str] = {}

    def of(self, name: str, version: str = "") -> list[Path]:
        """The sdists of project `name` (any case), those of release `version` (X.Y, X.Y.Z) first."""
        found = sorted(p for p in self.folder.glob("*.tar.gz") if p.name.lower().startswith(f"{name.lower()}-"))

        def other(sdist: Path) -> bool:
            release = sdist.name[len(name) + 1:-len(".tar.gz")]
            return not version or not (release == version or release.startswith(f"{version}."))
        return sorted(found, key=other)

    def tree(self, sdist: Path) -> Path:
        if sdist not in self.trees:
            work = Path(tempfile.mkdtemp(prefix="sdist-", dir=self.scratch))
            with tarfile.open(sdist) as tar:
                newest = max(member.mtime for member in tar.getmembers())
                tar.extractall(work, filter="tar")
            root = next(work.iterdir())
            self.days[root] = datetime.datetime.fromtimestamp(newest, datetime.timezone.utc).isoformat()
            for args in (["init", "-q"], ["add", "-A", "-f"], ["commit", "-qm", sdist.name]):
                git(root, *args, day=self.days[root])
            self.trees[sdist] = root
        return self.trees[sdist]


def stand_in(record: dict, sdists: Sdists, repos: Path) -> dict | None:
    """The record with its base rewritten to a stand-in commit, or None where no sdist takes it."""
    name = record["repo"].split("/")[1]
    for sdist in sdists.of(name, record["version"]):
        root = sdists.tree(sdist)
        if any(git(root, "apply", "-R", "--check", stdin=record[f].encode(), check=False).returncode
               for f in ("patch", "test_patch")):
            continue
        release = git(root, "rev-parse", "HEAD").stdout.decode().strip()
        for field in ("test_patch", "patch"):
            git(root, "apply", "-R", stdin=record[field].encode())
        git(root, "add", "-A", "-f")
        git(root, "commit", "-qm", f"{record['instance_id']}: {sdist.name} less its gold patches", day=sdists.days[root])
        base = git(root, "rev-parse", "HEAD").stdout.decode().strip()
        bare = repos / record["repo"].replace("/", "__")
        if not bare.exists():
            subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
        git(root, "push", "-q", "-f", str(bare), f"HEAD:refs/heads/{record['instance_id']}")
        git(root, "reset", "-q", "--hard", release)
        print(f"{record['instance_id']} ({record['version']}): stand-in from {sdist.name}", flush=True)
        return {**record, "base_commit": base, "environment_setup_commit": base}
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--sdists", type=Path, required=True)
    parser.add_argument("--repos", type=Path, required=True, help="where the stand-ins' bare repositories go")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", default="48")
    parser.add_argument("--tries", type=int, default=6, help="records of one version tried for a stand-in")
    parser.add_argument("--repo", action="append", help="owner/name to draw from (again for more); default: "
                        + ", ".join(COMPILED))
    parser.add_argument("--per-version", type=int, default=1, help="records drawn per (repository, version)")
    args = parser.parse_args()
    by_version = collections.defaultdict(list)
    for record in pq.read_table(args.dataset).to_pylist():
        if record["repo"] in (args.repo or COMPILED):
            by_version[(record["repo"], record["version"])].append(record)
    args.repos.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="swebench-compiled-") as scratch, args.out.open("w") as out:
        sdists = Sdists(args.sdists, Path(scratch))
        for key in sorted(by_version):
            records = sorted(by_version[key], key=lambda r: r["instance_id"])
            random.Random(f"{args.seed}-{key}").shuffle(records)
            if key[0] in CLONED:
                chosen = records[:args.per_version]
            else:
                made = (stand_in(r, sdists, args.repos) for r in records[:args.tries + args.per_version - 1])
                chosen = list(itertools.islice(filter(None, made), args.per_version))
            if not chosen:
                print(f"{key[0]} {key[1]}: none of {args.tries} records has a stand-in among the sdists", flush=True)
            for record in chosen:
                out.write(json.dumps(record, default=str) + "\n")


if __name__ == "__main__":
    main()
