"""Rebuild boltons.bundle and instances.jsonl from a clone of github.com/mahmoud/boltons.

    python tests/data/swebench/make_data.py /path/to/boltons-clone

For each fix below: `patch` is the fix's diff outside tests/, `test_patch` its diff
inside tests/; the tests of the files `test_patch` touches are run (with this
interpreter's pytest) at the parent with `test_patch` applied, then with `patch` too:
FAIL_TO_PASS failed then passed, PASS_TO_PASS passed both times. The bundle holds one
parentless commit per parent, with the parent's tree unchanged (the upstream history
is left out), and `base_commit` names that commit.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
FIXES = ["766b554", "4aa77cd", "1e61524"]
STAMP = {"GIT_AUTHOR_NAME": "endstate", "GIT_AUTHOR_EMAIL": "endstate@invalid", "GIT_COMMITTER_NAME": "endstate",
         "GIT_COMMITTER_EMAIL": "endstate@invalid", "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
         "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z"}


def git(repo: Path, *args: str, data: bytes | None = None) -> str:
    return subprocess.run(["git", "--git-dir", str(repo), *args], input=data, capture_output=True, check=True,
                          env={"PATH": "/usr/bin:/bin", **STAMP}).stdout.decode()


def outcomes(tree: Path, files: list[str]) -> dict[str, str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-q", "-p", "no:cacheprovider", *files],
                          cwd=tree, capture_output=True, text=True)
    found = {}
    for line in done.stdout.splitlines():
        match = re.match(r"^(PASSED|FAILED|ERROR) (\S+::\S+)", line)
        if match:
            found[match[2]] = match[1]
    return found


def main(clone: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "boltons.git"
        subprocess.run(["git", "clone", "-q", "--bare", "--no-local", clone, str(repo)], check=True)
        lines, refs = [], []
        for number, fix in enumerate(FIXES, start=1):
            parent = git(repo, "rev-parse", f"{fix}^").strip()
            subject = git(repo, "log", "-1", "--format=%s%n%n%b", fix).strip()
            patch = git(repo, "diff", "--no-renames", parent, fix, "--", ".", ":(exclude)tests")
            test_patch = git(repo, "diff", "--no-renames", parent, fix, "--", "tests")
            base = git(repo, "commit-tree", f"{parent}^{{tree}}", "-m",
                       f"mahmoud/boltons at {parent} (the parent of {fix}), without its history").strip()
            git(repo, "update-ref", f"refs/heads/base-{number}", base)
            refs.append(f"base-{number}")
            files = sorted(set(re.findall(r"^\+\+\+ b/(tests/test_\S+\.py)$", test_patch, re.M)))
            work = Path(tmp) / fix
            work.mkdir()
            subprocess.run(f"git --git-dir {repo} archive {parent} | tar -x -C {work}", shell=True, check=True)
            for diff in (test_patch, patch):
                subprocess.run(["git", "apply", "-"], cwd=work, input=diff.encode(), check=True)
                if diff is test_patch:
                    before = outcomes(work, files)
            after = outcomes(work, files)
            lines.append({
                "instance_id": f"mahmoud__boltons-{fix}", "repo": "mahmoud/boltons", "base_commit": base,
                "patch": patch, "test_patch": test_patch,
                "problem_statement": f"{subject}\n\n(From the boltons fix {fix}.)",
                "FAIL_TO_PASS": json.dumps(sorted(t for t, o in after.items() if o == "PASSED" and before.get(t) != "PASSED")),
                "PASS_TO_PASS": json.dumps(sorted(t for t, o in after.items() if o == "PASSED" and before.get(t) == "PASSED")),
                "version": "25.0", "created_at": git(repo, "log", "-1", "--format=%aI", fix).strip(),
                "hints_text": "", "environment_setup_commit": base,
            })
        git(repo, "bundle", "create", str(HERE / "boltons.bundle"), *refs)
        (HERE / "instances.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
        (HERE / "LICENSE").write_text(git(repo, "show", f"{FIXES[0]}:LICENSE"))


if __name__ == "__main__":
    main(sys.argv[1])
