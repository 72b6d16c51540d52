"""A fix commit taken apart: the tree before it, its code changes, its test changes.

Test files are those matching the test globs (`DEFAULT_TEST_GLOBS` unless the
author gives others); everything else the fix changes is the solution.
"""

from __future__ import annotations

import ast
import posixpath
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import msgspec

from endstate.errors import UserError
from endstate.sandbox import FileEntry, Tree, matches_any, tar_to_tree
from endstate.task import is_test_module, parse_python

__all__ = ["DEFAULT_TEST_GLOBS", "FixSplit", "split_fix", "submodule_trees", "suite_roots", "held_out_targets",
           "readers_of", "without_stale_tests"]

#: Where tests live unless the author says otherwise (`dir/**` covers everything below dir).
DEFAULT_TEST_GLOBS = ("tests/**", "test/**", "test_*.py", "**/test_*.py", "*_test.py",
                      "conftest.py", "**/conftest.py")

class FixSplit(msgspec.Struct):
    """A fix commit taken apart into the pieces of a task."""

    base: str
    head: str
    subject: str
    body: str
    fixture: Tree
    solution: Tree
    solution_deletes: list[str]
    holdout: Tree
    #: The test files the fix changes, as they were before it.
    parent_tests: Tree
    #: Non-test paths the fix changes: what the agent may change.
    fixed_paths: list[str]
    #: Symbolic links of the parent tree, which a fixture (regular files only) cannot hold.
    dropped_links: list[str] = []


# -- reading the repository -------------------------------------------------------------------
def _git(repo: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise UserError("git is not installed: `tasks new --repo` needs it") from None
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise UserError(f"git {' '.join(args[:2])} in {repo} failed: {message[-1] if message else 'no output'}")
    return done.stdout


def _commit(repo: Path, rev: str) -> str:
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").decode().strip()
    except UserError:
        raise UserError(f"--fix: {rev!r} is not a commit of {repo}") from None


def _tree_at(repo: Path, commit: str) -> Tree:
    """The files of `commit`, without any VCS folder, executable bits kept, and the files of
    each git submodule it names at the commit it pins (`submodule_trees`)."""
    # A fixture holds regular files only; the links are named apart (dropped_links).
    tree = {path: entry for path, entry in tar_to_tree(_git(repo, "archive", "--format=tar", commit)).items()
            if not entry.link}
    for path, files in submodule_trees(repo, commit).items():
        tree.update({posixpath.join(path, inner): entry for inner, entry in files.items()})
    return tree


def submodule_trees(repo: Path, commit: str, missing: Callable[[str], None] | None = None,
                    clones: Callable[[str], Path | None] | None = None) -> dict[str, Tree]:
    """path -> files of each submodule `commit` pins (a project's tests often read data kept in one:
    tomlkit's toml-test). Taken from the clone's own copy (`git submodule update --init`), else from a
    clone of the submodule's own repository that `clones(url)` finds (`tasks import`'s folder of clones),
    else fetched from the URL `.gitmodules` gives (the one step of `tasks new` that may use the network);
    one that cannot be had is an error naming it and what to do (`missing`: said to it instead, and left out)."""
    listing = _git(repo, "ls-tree", "-r", "-z", commit).decode("utf-8", errors="replace")
    pinned = {entry.split("\t", 1)[1]: entry.split()[2] for entry in listing.split("\0") if entry.startswith("160000 ")}
    if not pinned:
        return {}
    config = subprocess.run(["git", "-C", str(repo), "config", "--blob", f"{commit}:.gitmodules", "--get-regexp",
                             r"^submodule\..*\.(path|url)$"], capture_output=True, text=True, check=False).stdout
    fields: dict[str, dict[str, str]] = {}
    for line in config.splitlines():
        key, _, value = line.partition(" ")
        name, _, field = key.removeprefix("submodule.").rpartition(".")
        fields.setdefault(name, {})[field] = value.strip()
    found = {}
    for path, sha in sorted(pinned.items()):
        name, url = next(((n, f.get("url", "")) for n, f in fields.items() if f.get("path") == path), (path, ""))
        try:
            found[path] = _tree_at(_submodule_source(repo, name, path, url, sha, clones), sha)
        except UserError as exc:
            if missing is None:
                raise
            missing(f"left out of the fixture: {exc}")
    return found


def _submodule_source(repo: Path, name: str, path: str, url: str, sha: str,
                      clones: Callable[[str], Path | None] | None = None) -> Path:
    """A git directory that holds the submodule's commit `sha`."""
    git_dir = Path(_git(repo, "rev-parse", "--absolute-git-dir").decode().strip())
    beside = clones(url) if clones and url else None
    for local in (git_dir / "modules" / name, repo / path, *([beside] if beside else [])):
        if (local / "HEAD").exists() or (local / ".git").exists():
            if subprocess.run(["git", "-C", str(local), "cat-file", "-e", f"{sha}^{{commit}}"],
                              capture_output=True, check=False).returncode == 0:
                return local
    if url.startswith(("./", "../")):  # relative to the superproject's own origin
        origin = subprocess.run(["git", "-C", str(repo), "remote", "get-url", "origin"], capture_output=True,
                                text=True, check=False).stdout.strip() or str(repo)
        url = posixpath.normpath(posixpath.join(origin, url))
    cache = git_dir / "endstate-submodules" / re.sub(r"[^\w.-]+", "_", name)
    if not (cache / "HEAD").exists():
        subprocess.run(["git", "init", "--quiet", "--bare", str(cache)], capture_output=True, check=False)
    reason = "no URL for it in .gitmodules"
    for args in (["--depth", "1", url, sha], [url, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"]):
        if not url:
            break
        done = subprocess.run(["git", "-C", str(cache), "fetch", "--quiet", *args], capture_output=True, text=True,
                              check=False)
        if subprocess.run(["git", "-C", str(cache), "cat-file", "-e", f"{sha}^{{commit}}"],
                          capture_output=True, check=False).returncode == 0:
            return cache
        lines = done.stderr.strip().splitlines()
        reason = lines[-1] if lines else f"{url} does not hold that commit"
    raise UserError(f"the project's git submodule {path} ({url or 'no URL'} at {sha[:12]}) cannot be had: {reason}. "
                    f"Its tests may need it: run `git -C {repo} submodule update --init {path}` and try again")


def split_fix(repo: Path, fix: str, *, test_globs: tuple[str, ...] = DEFAULT_TEST_GLOBS,
              visible_tests: bool = False) -> FixSplit:
    """Take the fix `fix` (a commit, or `A..B`) of the git repository `repo` apart."""
    repo = Path(repo)
    if not (repo / ".git").exists() and not _is_repo(repo):
        raise UserError(f"--repo: {repo} is not a git repository")
    if ".." in fix:
        first, _, last = fix.partition("..")
        base, head = _commit(repo, first), _commit(repo, last)
    else:
        head = _commit(repo, fix)
        parents = _git(repo, "rev-list", "--parents", "-n", "1", head).decode().split()[1:]
        if not parents:
            raise UserError(f"--fix: {fix} is the repository's first commit: there is nothing before the fix")
        base = parents[0]
    message = _git(repo, "log", "-1", "--format=%B", head).decode("utf-8", errors="replace").strip()
    subject, _, body = message.partition("\n")
    if len(_git(repo, "rev-list", "--parents", "-n", "1", head).split()) > 2 and body.strip():
        # A merge says "Merge pull request #N from ..."; what it fixes is the body's first line.
        subject, _, rest = body.strip().partition("\n")
        body = "\n".join(part for part in (rest.strip(), message.partition("\n")[0]) if part)
    before, after = _tree_at(repo, base), _tree_at(repo, head)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    if not changed:
        raise UserError(f"--fix: {fix} changes no file")
    tests = [p for p in changed if matches_any(p, test_globs)]
    code = [p for p in changed if not matches_any(p, test_globs)]
    if not code:
        raise UserError(f"--fix: {fix} changes only test files ({', '.join(tests[:3])}): there is nothing for an "
                        "agent to fix; pick the commit that fixes the code, or a range that includes it")
    holdout = {p: after[p] for p in tests if p in after}
    if not holdout:
        raise UserError(f"--fix: {fix} changes no test (nothing matching {', '.join(test_globs)}): a task needs "
                        "the regression test that shows the fix works. Give a range A..B that also takes in the "
                        "commit adding that test, or --tests GLOB when the project keeps its tests elsewhere")
    if not any(is_test_module(p) for p in holdout) and not readers_of(holdout, after, test_globs):
        raise UserError(f"--fix: {fix} changes test files ({', '.join(sorted(holdout)[:3])}) but no test module, "
                        "and no test module of the project names them: give a range A..B that takes in the test "
                        "module which reads them, or --tests GLOB")
    fixture = dict(before)
    for path in tests:  # tests the fix removes or rewrites would only fail against the solution
        if path not in after:
            fixture.pop(path, None)
        elif path in before and is_test_module(path):
            fixture[path] = FileEntry(before[path].mode, without_stale_tests(before[path].data, after[path].data))
    if visible_tests:
        fixture.update(holdout)
    return FixSplit(
        base=base, head=head, subject=subject.strip(), body=body.strip(), fixture=fixture,
        parent_tests={p: before[p] for p in tests if p in before},
        solution={p: after[p] for p in code if p in after},
        solution_deletes=[p for p in code if p not in after],
        holdout=holdout, fixed_paths=code, dropped_links=_links_at(repo, base),
    )


def _links_at(repo: Path, commit: str) -> list[str]:
    listing = _git(repo, "ls-tree", "-r", "-z", commit).decode("utf-8", errors="replace")
    return sorted(entry.split("\t", 1)[1] for entry in listing.split("\0") if entry.startswith("120000 "))


def _is_repo(repo: Path) -> bool:
    try:
        _git(repo, "rev-parse", "--git-dir")
    except UserError:
        return False
    return True


def suite_roots(fixture: Tree, test_globs: tuple[str, ...]) -> list[str]:
    """What `pytest` is pointed at for the task's own suite: the top folder (or file) of each test module."""
    return sorted({p.split("/", 1)[0] for p in fixture if matches_any(p, test_globs) and is_test_module(p)})


def _collected(node: ast.ClassDef) -> bool:
    """Whether a runner collects this class by its own name: a TestCase, or a plain class named
    Test... (pytest's own style)."""
    bases = [ast.unparse(base) for base in node.bases]
    return any(b.endswith("TestCase") for b in bases) or (node.name.startswith("Test")
                                                           and all(b == "object" for b in bases))


def _test_spans(module: ast.Module) -> dict[str, tuple[int, int, ast.ClassDef | None]]:
    """pytest node-id suffix (`Class::test_x` or `test_x`) -> (first line, last line, its class)
    of every test function of `module`, decorators included (lines count from 1)."""
    found = {}
    for node in module.body:
        # A class no runner collects by itself (a mixin: its tests run in the classes that
        # inherit it) has no node id of its own: its tests are marked with a leading "?".
        own = "" if not isinstance(node, ast.ClassDef) or _collected(node) else "?"
        inner = [(f"{own}{node.name}::", n) for n in node.body] if isinstance(node, ast.ClassDef) else [("", node)]
        for prefix, item in inner:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                first = min([item.lineno] + [d.lineno for d in item.decorator_list])
                found[prefix + item.name] = (first, item.end_lineno or item.lineno,
                                             node if isinstance(node, ast.ClassDef) else None)
    return found


def _test_functions(text: str) -> dict[str, str] | None:
    """pytest node-id suffix (`Class::test_x` or `test_x`) -> source of every test function in `text`."""
    try:
        module = parse_python(text)
    except SyntaxError:
        return None
    lines = text.splitlines()
    return {name: "\n".join(lines[first - 1:last]) for name, (first, last, _) in _test_spans(module).items()}


def without_stale_tests(before: bytes, after: bytes) -> bytes:
    """The test module `before` less the test functions the fix (which leaves it as `after`)
    rewrote or removed: their old versions can fail on a correct fix, and an agent that saw
    them fail could only edit them (which files_unchanged takes for tampering) or doubt its
    fix. The new versions are held out. A class left with no statement keeps `pass`.
    `before` comes back unchanged when nothing is cut, or when either side is not Python in UTF-8."""
    try:
        text = before.decode("utf-8")
        old, new = _test_functions(text), _test_functions(after.decode("utf-8"))
    except UnicodeDecodeError:
        return before
    if old is None or new is None:
        return before
    stale = {name for name, source in old.items() if new.get(name) != source}
    if not stale:
        return before
    spans = _test_spans(parse_python(text))
    lines = text.splitlines(keepends=True)
    cuts: list[tuple[int, int, str]] = []  # (first, past-last line index, what stands instead)
    emptied = {owner for owner in {spans[n][2] for n in stale} if owner is not None
               and sum(spans[n][2] is owner for n in stale) == len(owner.body)}
    for owner in emptied:  # nothing else in the class: it keeps a `pass`
        mine = [spans[n][:2] for n in stale if spans[n][2] is owner]
        body = owner.body[0]
        cuts.append((min(f for f, _ in mine) - 1, max(t for _, t in mine),
                     lines[body.lineno - 1][:body.col_offset] + "pass\n"))
    for name in (n for n in stale if spans[n][2] not in emptied):
        first, last = spans[name][0] - 1, spans[name][1]
        # With the blank lines before it (else those after it), so that the spacing around stays as it was.
        above = first
        while above > 0 and not lines[above - 1].strip():
            above -= 1
        below = last
        while above == first and below < len(lines) and not lines[below].strip():
            below += 1
        cuts.append((above, below, ""))
    out, index = [], 0
    for first, last, instead in sorted(cuts):
        if first >= index:  # a cut that shares blank lines with the one before it is part of that one
            out += lines[index:first] + [instead]
        index = max(index, last)
    trimmed = "".join(out + lines[index:])
    try:
        parse_python(trimmed)
    except SyntaxError:
        return before
    return trimmed.encode("utf-8")


def readers_of(holdout: Tree, tree: Tree, test_globs: tuple[str, ...]) -> list[str]:
    """Test modules of `tree` that read the held-out data files (regression tests kept as data:
    an input and its expected output, picked up by an unchanged test module).

    For each data file, the test modules that name it, else its folder, else the folder
    above, ...: the nearest name a module spells out (`"valid"`, `data_dir / "invalid"`)."""
    modules = {p: tree[p].data.decode("utf-8", errors="replace") for p in sorted(tree)
               if is_test_module(p) and matches_any(p, test_globs)}
    found: set[str] = set()
    for path in (p for p in holdout if not p.endswith(".py")):
        parts = path.split("/")
        for depth in range(len(parts), 0, -1):
            name = parts[depth - 1]
            if name.endswith(".py"):
                continue
            stem = re.escape(name)
            spelled = re.compile(rf"[\"'/]{stem}[\"'/]|[\"']{re.escape(name.rsplit('.', 1)[0])}[\"'.]")
            readers = [m for m, text in modules.items() if spelled.search(text)]
            if readers:
                found.update(readers)
                break
    return sorted(found)


def held_out_targets(split: FixSplit, before: Tree) -> list[str]:
    """What the holdout grader runs: the tests the fix added or changed, by node id, where they can be told
    apart; a whole test module where they cannot (a new module, or one whose helpers changed); and the
    test modules that read the data files the fix added or changed."""
    targets = []
    for path in sorted(p for p in split.holdout if is_test_module(p)):
        after = _test_functions(split.holdout[path].data.decode("utf-8", errors="replace"))
        old = _test_functions(before[path].data.decode("utf-8", errors="replace")) if path in before else None
        changed = [name for name, source in (after or {}).items() if old is not None and old.get(name) != source]
        whole = not changed or any(name.startswith("?") for name in changed)
        targets += [path] if whole else [f"{path}::{name}" for name in changed]
    tree = {**split.fixture, **split.holdout}
    data = {p: e for p, e in split.holdout.items() if not p.endswith(".py")}
    targets += [m for m in readers_of(data, tree, tuple(DEFAULT_TEST_GLOBS) + ("**",))
                if not any(t.split("::")[0] == m for t in targets)]
    return targets
