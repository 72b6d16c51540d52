"""`endstate tasks import swebench` on real fix commits of real repositories.

Where bench/swebench_real.py makes instances from two releases, this one makes them as
SWE-bench does, from one fix commit of a repository's history: `base_commit` is the fix's
parent, `patch` its change outside the tests, `test_patch` its change inside them
(DEFAULT_TEST_GLOBS), FAIL_TO_PASS / PASS_TO_PASS the tests of the touched test files that
fail before the fix and pass after it / pass both times, run in a venv of the project
installed at the fix with its test extras (and any `pip` arguments given per commit), named
as pytest's `-rA` lines name them.

The repositories are local git directories (a clone or a bare mirror), given on the command
line as owner/name=PATH; nothing is fetched but wheels from PyPI. Everything generated stays in
the cache folder (default /tmp/swebench_fixes), never in this repository.

    python bench/swebench_fixes.py --repo pallets/click=/path/to/click.git \\
        --fix pallets/click@COMMIT [--fix owner/name@COMMIT:pip-args ...] [--import]

`--fix pallets/flask@#5063` takes the merge of pull request 5063 and names the instance as SWE-bench
does (`pallets__flask-5063`); with `--gold check-harness.jsonl` its `patch` is SWE-bench's own gold
patch. The base is the merge's first parent, and FAIL_TO_PASS / PASS_TO_PASS are run here, not the
dataset's (which cannot be had here): real instances' fixes, on their pull requests' own trees.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from swebench_real import git, import_one, outcomes, run, split_diff  # noqa: E402


def clone(cache: Path, repo: str, source: Path) -> Path:
    target = cache / "repos" / repo.replace("/", "__")
    if not (target / ".git").exists():
        shutil.rmtree(target, ignore_errors=True)
        run("git", "clone", "-q", "--no-checkout", str(source), str(target))
    return target


def fix_venv(cache: Path, slug: str, tree: Path, pip_args: list[str]) -> Path:
    """A venv with the project installed at the fix (its test extras), pytest, and `pip_args`."""
    venv = cache / "venvs" / slug
    python = venv / "bin" / "python"
    if (venv / ".done").exists():
        return python
    shutil.rmtree(venv, ignore_errors=True)
    run(sys.executable, "-m", "venv", str(venv))
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    run(*pip, "pip>=25.1", "pytest")  # pip 25.1 installs dependency groups (--group)
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / tree.name
        shutil.copytree(tree, copy, symlinks=True)
        for extras in ("test,tests,testing", "tests", "testing", "test", ""):
            if run(*pip, f"{copy}[{extras}]" if extras else str(copy), check=False).returncode == 0:
                break
    groups = tomllib.loads((tree / "pyproject.toml").read_text()).get("dependency-groups", {}) \
        if (tree / "pyproject.toml").is_file() else {}
    for group in ("test", "tests", "testing"):
        if group in groups:
            run(*pip, "--group", group, cwd=tree)
    if pip_args:
        run(*pip, *pip_args, cwd=tree)
    (venv / ".done").touch()
    return python


def generated(python: Path, tree: Path) -> None:
    """Copy into the tree the modules its install generated (a VCS version file) that it lacks."""
    site = next((python.parent.parent / "lib").glob("python3*/site-packages"))
    for top in (tree / "src", tree):
        for package in (p for p in top.iterdir() if (p / "__init__.py").is_file()) if top.is_dir() else ():
            installed = site / package.name
            for module in installed.glob("*.py") if installed.is_dir() else ():
                if not (package / module.name).exists():
                    shutil.copy(module, package / module.name)


def was_before(before: dict[str, str], node_id: str) -> str | None:
    """The outcome before the fix of the test `node_id` names after it: a case whose id holds the clock of
    the run (marshmallow's `datetime.now()` cases) is the one case before of the same shape, digits aside."""
    if node_id in before:
        return before[node_id]
    shape = re.sub(r"\d", "0", node_id)
    same = [o for t, o in before.items() if "[" in t and re.sub(r"\d", "0", t) == shape]
    return same[0] if len(same) == 1 else None


def pull_request(clone_dir: Path, number: str) -> str:
    """The merge commit of pull request `number` ("Merge pull request #N from ..."), as SWE-bench's
    instance `owner__name-N` was made from that pull request."""
    found = git(clone_dir, "log", "--all", "--format=%H", "--grep", f"^Merge pull request #{number} ").split()
    if not found:
        raise SystemExit(f"no merge of pull request #{number} in {clone_dir}")
    return found[-1]


def make_instance(cache: Path, repo: str, source: Path, commit: str, pip_args: list[str],
                  gold: dict[str, str] | None = None) -> dict:
    """`commit` "#N": the merge of pull request N, named by SWE-bench's own id; its `patch` is `gold`'s
    patch for that id (SWE-bench's published gold patch) where given and it applies."""
    clone_dir = clone(cache, repo, source)
    number = commit[1:] if commit.startswith("#") else ""
    commit = pull_request(clone_dir, number) if number else commit
    fix = git(clone_dir, "rev-parse", commit).strip()
    base = git(clone_dir, "rev-parse", f"{fix}^").strip()
    patch, test_patch = split_diff(clone_dir, base, fix)
    real_id = f"{repo.replace('/', '__')}-{number}" if number else ""
    gold = gold or {}
    if real_id and gold.get(real_id):
        patch = gold[real_id]
    files = sorted({f for f in re.findall(r"^\+\+\+ b/(\S+\.py)$", test_patch, re.M)
                    if re.search(r"(^|/)(test_[^/]*|[^/]*_test)\.py$", f)})
    slug = real_id or f"{repo.replace('/', '__')}-{fix[:8]}"
    work = cache / "work" / slug
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    subprocess.run(f"git -C {clone_dir} archive {fix} | tar -x -C {work}", shell=True, check=True)
    python = fix_venv(cache, slug, work, pip_args)
    shutil.rmtree(work)
    work.mkdir()
    subprocess.run(f"git -C {clone_dir} archive {base} | tar -x -C {work}", shell=True, check=True)
    generated(python, work)
    if test_patch:
        run("git", "apply", "-", cwd=work, data=test_patch)
    before = outcomes(python, work, files)
    if patch and real_id and patch is gold.get(real_id) and run("git", "apply", "--check", "-", cwd=work, data=patch,
                                                                  check=False).returncode != 0:
        print(f"{real_id}: SWE-bench's gold patch does not apply on the merge's first parent: the merge's own "
              "change is taken", flush=True)
        patch = split_diff(clone_dir, base, fix)[0]
    if patch:
        run("git", "apply", "-", cwd=work, data=patch)
    after = outcomes(python, work, files)
    passed = sorted(t for t, o in after.items() if o == "PASSED")
    before = {t: was_before(before, t) for t in passed}
    subject = git(clone_dir, "log", "-1", "--format=%s%n%n%b", fix).strip()
    return {"instance_id": slug, "repo": repo, "base_commit": base, "patch": patch, "test_patch": test_patch,
            "problem_statement": subject, "version": "",
            "FAIL_TO_PASS": json.dumps([t for t in passed if before.get(t) != "PASSED"]),
            "PASS_TO_PASS": json.dumps([t for t in passed if before.get(t) == "PASSED"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/swebench_fixes"))
    parser.add_argument("--repo", action="append", default=[], help="owner/name=PATH of a local git directory")
    parser.add_argument("--fix", action="append", default=[], help="owner/name@COMMIT[:pip arguments]")
    parser.add_argument("--import", dest="do_import", action="store_true", help="import each and check it")
    parser.add_argument("--gold", type=Path, help="JSON lines of instance_id and model_patch: SWE-bench's gold "
                        "patches (its docs/20240415_eval_bug/check-harness.jsonl), taken for --fix owner/name@#N")
    args = parser.parse_args()
    sources = dict(item.split("=", 1) for item in args.repo)
    gold = {row["instance_id"]: row["model_patch"] for row in map(json.loads, args.gold.read_text().splitlines())} \
        if args.gold else {}
    made = []
    for item in args.fix:
        spec, _, pip = item.partition(":")
        repo, _, commit = spec.partition("@")
        try:
            instance = make_instance(args.cache, repo, Path(sources[repo]), commit, shlex.split(pip), gold)
        except subprocess.CalledProcessError as error:
            print(f"{spec}: not made: {' '.join(map(str, error.cmd[:4]))}... {error.stderr.strip()[-300:]}", flush=True)
            continue
        f2p, p2p = json.loads(instance["FAIL_TO_PASS"]), json.loads(instance["PASS_TO_PASS"])
        print(f"{instance['instance_id']}: {len(f2p)} F2P, {len(p2p)} P2P", flush=True)
        (args.cache / "made").mkdir(parents=True, exist_ok=True)
        (args.cache / "made" / f"{instance['instance_id']}.json").write_text(json.dumps(instance) + "\n")
        if f2p:
            made.append(instance)
    out = args.cache / "instances.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(i) + "\n" for i in made))
    print(f"{len(made)} instance(s) in {out}")
    if args.do_import:
        checked, walls = 0, []
        for instance in made:
            verdict, wall = import_one(args.cache, instance)
            checked += verdict == "checked out"
            walls.append(wall)
            print(f"{instance['instance_id']}: {verdict[:300]}  ({wall:.0f} s)", flush=True)
        if walls:
            print(f"{checked} of {len(walls)} checked out; wall median {sorted(walls)[len(walls) // 2]:.0f} s")


if __name__ == "__main__":
    main()
