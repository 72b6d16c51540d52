"""`endstate tasks import swebench` on real projects: SWE-bench instances made from PyPI releases.

There is no GitHub here, but PyPI is reachable and many projects' sdists hold their tests.
For each (project, older release, newer release) below, one SWE-bench-format instance:

    base_commit   a git repo made from the older sdist (one parentless commit)
    patch         the diff between the two sdists outside the tests (text files only; not the
                  release's bookkeeping: PKG-INFO, egg-info, a version-only config change)
    test_patch    the diff inside the tests (DEFAULT_TEST_GLOBS: tests/, test_*.py, conftest.py)
    FAIL_TO_PASS  the tests of the files test_patch touches that fail (or do not exist) with
    PASS_TO_PASS  test_patch alone and pass with patch too / that pass both times, as pytest
                  names them (`-rA`), run in a venv of the project's own test dependencies

Then each instance is imported on its own (`-j 1`), and the script prints per instance
`checked out` or the one-line reason, its wall, and the count. Everything generated stays
in the cache folder (default /tmp/swebench_real), never in this repository.

    python bench/swebench_real.py [--only attrs,click] [--cache /tmp/swebench_real]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from endstate.authoring._fix import DEFAULT_TEST_GLOBS  # noqa: E402
from endstate.grading._builtin import TEST_CONFIG  # noqa: E402
from endstate.sandbox import matches_any  # noqa: E402

# (PyPI name, older release, newer release): consecutive releases whose test diff adds a test
# that fails before the newer release's code and passes after it.
PAIRS = [
    ("attrs", "23.1.0", "23.2.0"),
    ("filelock", "3.13.0", "3.13.1"),
    ("click", "8.1.6", "8.1.7"),
    ("Jinja2", "3.1.2", "3.1.3"),
    ("MarkupSafe", "2.1.3", "2.1.4"),
    ("tomlkit", "0.12.1", "0.12.2"),
    ("python-dateutil", "2.8.1", "2.8.2"),
    ("marshmallow", "3.20.1", "3.20.2"),
    ("itsdangerous", "2.1.1", "2.1.2"),
    ("pluggy", "1.3.0", "1.4.0"),
    ("packaging", "23.1", "23.2"),
    ("tomli", "2.0.0", "2.0.1"),
    ("more-itertools", "10.1.0", "10.2.0"),
    ("boltons", "23.0.0", "23.1.0"),
    ("requests", "2.31.0", "2.32.0"),
    ("cachetools", "5.3.1", "5.3.2"),
    ("Werkzeug", "3.0.0", "3.0.1"),
    ("MarkupSafe", "2.1.4", "2.1.5"),
    ("click", "8.1.7", "8.2.0"),
    ("iniconfig", "1.1.1", "2.0.0"),
    ("Flask", "3.0.0", "3.0.1"),
    ("blinker", "1.7.0", "1.8.0"),
    ("platformdirs", "4.0.0", "4.1.0"),
    ("toolz", "0.12.0", "0.12.1"),
]
STAMP = {"GIT_AUTHOR_NAME": "endstate", "GIT_AUTHOR_EMAIL": "endstate@invalid", "GIT_COMMITTER_NAME": "endstate",
         "GIT_COMMITTER_EMAIL": "endstate@invalid", "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
         "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z", "PATH": "/usr/bin:/bin"}
EXTRAS = "test,tests,testing"


def run(*args: str, cwd: Path | None = None, check: bool = True, data: str | None = None,
        env: dict | None = None) -> subprocess.CompletedProcess:
    # Bytes, decoded by hand: text mode would turn a diff's CRLF lines into LF ones that no longer apply.
    done = subprocess.run(list(args), cwd=cwd, capture_output=True, check=check, env=env,
                          input=None if data is None else data.encode(errors="surrogateescape"))
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(errors="surrogateescape"),
                                       done.stderr.decode(errors="replace"))


def _text(output: str | bytes | None) -> str:
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


def sdist(cache: Path, name: str, version: str) -> Path:
    """The release's sdist, unpacked (one folder: name-version)."""
    where = cache / "sdists" / f"{name}-{version}"
    if (where / ".done").exists():
        return next(p for p in where.iterdir() if p.is_dir())
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    run(sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps",
        "-d", str(where), f"{name}=={version}")
    archive = next(p for p in where.iterdir() if p.is_file())
    if archive.suffix == ".zip":
        zipfile.ZipFile(archive).extractall(where)
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(where, filter="data")
    archive.unlink()
    (where / ".done").touch()
    return next(p for p in where.iterdir() if p.is_dir())


def git(repo: Path, *args: str, data: str | None = None) -> str:
    return run("git", "-C", str(repo), *args, data=data, env=STAMP).stdout


def commit_tree(repo: Path, tree: Path, message: str) -> str:
    """Replace the repo's work tree by `tree`'s files and commit them; the commit's id."""
    for entry in repo.iterdir():
        if entry.name != ".git":
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    # A top-level build/ is what an in-tree `pip install` wrote (caches made before test_venv
    # installed from a copy hold one): a release's sdist does not ship it.
    def top_build(folder: str, names: list[str]) -> list[str]:
        return ["build"] if Path(folder) == tree else []
    shutil.copytree(tree, repo, dirs_exist_ok=True, symlinks=True, ignore=top_build)
    git(repo, "add", "-A", "-f")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def _bookkeeping(repo: Path, old: str, new: str, path: str) -> bool:
    """A release's change that no fix makes: its sdist metadata, or a configuration file whose
    only changed lines are the version (a fix in SWE-bench does not bump it)."""
    if path.rsplit("/", 1)[-1] == "PKG-INFO" or ".egg-info/" in path:
        return True
    if path.rsplit("/", 1)[-1] not in TEST_CONFIG:
        return False
    lines = [line for line in git(repo, "diff", "-U0", old, new, "--", path).splitlines()
             if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    return all("version" in line.lower() for line in lines)


def split_diff(repo: Path, old: str, new: str) -> tuple[str, str]:
    """(patch, test_patch) between two commits; binary changes are left out, as a text patch
    cannot carry them."""
    code, tests = [], []
    for line in git(repo, "diff", "--no-renames", "--numstat", old, new).splitlines():
        added, _removed, path = line.split("\t", 2)
        if added == "-":
            continue
        if _bookkeeping(repo, old, new, path):
            continue
        (tests if matches_any(path, DEFAULT_TEST_GLOBS) else code).append(path)

    def diff(paths: list[str]) -> str:
        return git(repo, "diff", "--no-renames", old, new, "--", *paths) if paths else ""
    return diff(code), diff(tests)


def test_venv(cache: Path, name: str, tree: Path) -> Path:
    """A venv holding pytest and the newer release's test dependencies (its test extras and
    test requirements files, as far as they install), with the project itself installed."""
    venv = cache / "venvs" / name
    python = venv / "bin" / "python"
    if (venv / ".done").exists():
        return python
    shutil.rmtree(venv, ignore_errors=True)
    run(sys.executable, "-m", "venv", str(venv))
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    run(*pip, "pytest")
    with tempfile.TemporaryDirectory() as scratch:  # a copy: pip's build/ must not join the release's tree
        copy = Path(scratch) / tree.name
        shutil.copytree(tree, copy, symlinks=True)
        run(*pip, f"{copy}[{EXTRAS}]", check=False)
    for req in sorted(tree.glob("**/*.txt")):
        if re.search(r"test", req.name) and "requirements" in str(req.relative_to(tree)).lower() + req.name:
            run(*pip, "-r", str(req), check=False)
    (venv / ".done").touch()
    return python


def outcomes(python: Path, tree: Path, files: list[str]) -> dict[str, str]:
    paths = [str(tree / "src"), str(tree)] if (tree / "src").is_dir() else [str(tree)]
    done = run(str(python), "-m", "pytest", "-rA", "-q", "-p", "no:cacheprovider", *files, cwd=tree, check=False,
               env={"PATH": f"{python.parent}:/usr/bin:/bin", "PYTHONPATH": ":".join(paths), "HOME": str(tree)})
    found = {}
    for line in done.stdout.splitlines():
        match = re.match(r"^(PASSED|FAILED|ERROR) (\S+::\S+)", line)
        if match:
            found[match[2]] = match[1]
    return found


def make_instance(cache: Path, name: str, old: str, new: str) -> dict:
    old_tree, new_tree = sdist(cache, name, old), sdist(cache, name, new)
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower())
    repo = cache / "repos" / slug
    shutil.rmtree(repo, ignore_errors=True)
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    base = commit_tree(repo, old_tree, f"{name} {old} (its sdist)")
    head = commit_tree(repo, new_tree, f"{name} {new} (its sdist)")
    git(repo, "checkout", "-q", base)
    patch, test_patch = split_diff(repo, base, head)
    files = sorted({f for f in re.findall(r"^\+\+\+ b/(\S+\.py)$", test_patch, re.M)
                    if re.search(r"(^|/)(test_[^/]*|[^/]*_test)\.py$", f)})
    python = test_venv(cache, slug, new_tree)
    work = cache / "work" / slug
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)  # the base commit as the importer sees it (.gitattributes applied)
    subprocess.run(f"git -C {repo} archive {base} | tar -x -C {work}", shell=True, check=True)
    before = after = {}
    for diff in (test_patch, patch):
        if diff:
            run("git", "apply", "-", cwd=work, data=diff)
        if diff is test_patch:
            before = outcomes(python, work, files)
    after = outcomes(python, work, files)
    passed = sorted(t for t, o in after.items() if o == "PASSED")
    return {
        "instance_id": f"pypi__{slug}-{new}", "repo": f"pypi/{slug}", "base_commit": base,
        "patch": patch, "test_patch": test_patch,
        "problem_statement": f"Make {name} {old} behave as {name} {new} does: the changes between the two "
                             "releases, where its tests show them.",
        "FAIL_TO_PASS": json.dumps([t for t in passed if before.get(t) != "PASSED"]),
        "PASS_TO_PASS": json.dumps([t for t in passed if before.get(t) == "PASSED"]),
        "version": new,
    }


def import_one(cache: Path, instance: dict) -> tuple[str, float]:
    """('checked out' or the one-line reason, wall seconds) of importing one instance."""
    folder = cache / "import" / instance["instance_id"]
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "instance.jsonl").write_text(json.dumps(instance) + "\n")
    start = time.perf_counter()
    done = run(sys.executable, "-m", "endstate", "tasks", "import", "swebench", str(folder / "instance.jsonl"),
               "--repos", str(cache / "repos"), "--out", str(folder / "tasks"), "-j", "1", cwd=ROOT, check=False)
    wall = time.perf_counter() - start
    (folder / "log.txt").write_text(done.stdout + done.stderr)
    if done.returncode == 0:
        return "checked out", wall
    reasons = [line.split("not written: ", 1)[1] for line in done.stderr.splitlines() if "not written: " in line]
    return (reasons[0] if reasons else (done.stderr.strip().splitlines() or ["exit %d" % done.returncode])[-1]), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path("/tmp/swebench_real"))
    parser.add_argument("--only", default="", help="comma-separated PyPI names or name-newer (default: all)")
    args = parser.parse_args()
    only = {n.lower() for n in args.only.split(",") if n}
    pairs = [p for p in PAIRS if not only or p[0].lower() in only or f"{p[0]}-{p[2]}".lower() in only]
    checked, walls = 0, []
    for name, old, new in pairs:
        try:
            instance = make_instance(args.cache, name, old, new)
        except subprocess.CalledProcessError as error:
            print(f"{name} {old}->{new}: not made: {' '.join(error.cmd[:4])}... {_text(error.stderr).strip()[-200:]}",
                  flush=True)
            continue
        fail_to_pass = json.loads(instance["FAIL_TO_PASS"])
        if not fail_to_pass:
            print(f"{name} {old}->{new}: not made: no test fails before and passes after "
                  f"({len(json.loads(instance['PASS_TO_PASS']))} pass both times)", flush=True)
            continue
        verdict, wall = import_one(args.cache, instance)
        checked += verdict == "checked out"
        walls.append(wall)
        print(f"{instance['instance_id']}: {verdict[:300]}  ({len(fail_to_pass)} F2P, "
              f"{len(json.loads(instance['PASS_TO_PASS']))} P2P, {wall:.0f} s)", flush=True)
    if walls:
        print(f"{checked} of {len(walls)} instance(s) checked out; wall per instance: median "
              f"{sorted(walls)[len(walls) // 2]:.0f} s, total {sum(walls):.0f} s")


if __name__ == "__main__":
    main()
