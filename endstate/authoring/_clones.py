"""The local clones `tasks import swebench` reads: a repository found under the repos folder by
its SWE-bench name, and its tree at a commit (no history; submodules from the clone where it has them, else
from a clone of their own repository in the same folder);
the tag, the version setuptools_scm would give and the date of a commit, which `tasks new` reads of its
repository too."""

from __future__ import annotations

import posixpath
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from endstate.authoring._fix import submodule_trees
from endstate.errors import UserError
from endstate.sandbox import FileEntry, Tree, tar_to_tree

__all__ = ["clone_git", "find_clone", "base_tree", "last_tag", "scm_version", "commit_date", "requirements_at"]


def clone_git(repo: Path, *args: str) -> bytes:
    done = _git(repo, *args)
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        raise UserError(f"git {args[0]} in {repo} failed: {lines[-1] if lines else 'no output'}")
    return done.stdout


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "--git-dir" if _bare(repo) else "-C", str(repo), *args],
                          capture_output=True, check=False)


def _bare(repo: Path) -> bool:
    return not (repo / ".git").exists() and (repo / "HEAD").is_file() and (repo / "objects").is_dir()


def find_clone(repos: Path, name: str) -> Path:
    owner, _, project = name.partition("/")
    candidates = [f"{owner}__{project}", f"{owner}/{project}", project] if project else [name]
    for candidate in candidates:
        for suffix in ("", ".git"):
            folder = repos / (candidate + suffix)
            if (folder / ".git").exists() or _bare(folder):
                return folder
    looked = ", ".join(f"{c}[.git]" for c in candidates)
    raise UserError(f"no clone of {name} under {repos} (looked for {looked})")


def _clone_of_url(repos: Path) -> Callable[[str], Path | None]:
    """The clone under `repos` of the repository a submodule's URL names (`https://github.com/OWNER/NAME.git`,
    `git@github.com:OWNER/NAME`), named as `find_clone` finds a record's, or None."""
    def found(url: str) -> Path | None:
        named = re.search(r"[/:](\w[\w.-]*)/(\w[\w.-]*?)(?:\.git)?/?$", url)  # never `..`: no folder outside
        if named is None:
            return None
        try:
            return find_clone(repos, f"{named[1]}/{named[2]}")
        except UserError:
            return None
    return found


def base_tree(repo: Path, commit: str, log: Callable[[str], None] = lambda line: None,
              repos: Path | None = None) -> Tree:
    """The files of `commit`, and of each submodule it pins: from the clone's own copy, else from a clone of the
    submodule's repository beside it under `repos`, else fetched (`submodule_trees`)."""
    if not re.fullmatch(r"[0-9a-fA-F]{7,40}", commit):
        raise UserError(f"field `base_commit` is {commit!r}, not a commit id")
    try:
        clone_git(repo, "cat-file", "-e", f"{commit}^{{commit}}")
    except UserError:
        raise UserError(f"base_commit {commit} is not in {repo}: fetch it into the clone") from None
    archive = _archive(repo, commit)
    tree = {p: e for p, e in tar_to_tree(archive).items() if not e.link}
    # Tests often read data kept in a submodule; one the clone lacks and cannot fetch is said, and left out
    # (the dataset's own harness clones without them).
    for path, files in submodule_trees(repo, commit, missing=log,
                                       clones=_clone_of_url(repos) if repos else None).items():
        tree.update({f"{path}/{inner}": entry for inner, entry in files.items()})
    return tree


def requirements_at(repo: Path, commit: str, paths: list[str], log: Callable[[str], None]) -> Tree:
    """The first of `paths` that `commit` holds, with the files its `-r` lines name (relative to its folder), as
    that commit has them: SWE-bench reads a version's requirements at its environment_setup_commit, not at each
    record's base_commit. Empty, and said, when the clone lacks the commit."""
    if _git(repo, "cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
        log(f"environment_setup_commit {commit[:12]} is not in {repo}: the requirements files are read at "
            "base_commit (fetch it into the clone to read them as SWE-bench does)")
        return {}
    for path in paths:
        shown = _git(repo, "show", f"{commit}:{path}")
        if shown.returncode != 0:
            continue
        found = {path: FileEntry(0o644, shown.stdout)}
        for line in shown.stdout.decode("utf-8", errors="replace").splitlines():
            if line.strip().startswith("-r"):
                named = posixpath.normpath(posixpath.join(posixpath.dirname(path), line.strip()[2:].strip()))
                included = _git(repo, "show", f"{commit}:{named}")
                if included.returncode == 0:
                    found[named] = FileEntry(0o644, included.stdout)
        return found
    return {}


def _archive(repo: Path, commit: str) -> bytes:
    done = _git(repo, "archive", "--format=tar", commit)
    if done.returncode == 0:
        return done.stdout
    said = done.stderr.decode(errors="replace")
    # A partial clone (--filter=blob:limit=...) or a damaged one: git names the object and the file it
    # cannot read; the user's move is to fetch the objects, not to read git's own wording.
    lost = re.search(r"invalid object \d+ ([0-9a-f]{40}) for '([^']+)'", said)
    if lost:
        raise UserError(f"the clone {repo} lacks {lost[2]} at base_commit {commit[:12]} (object {lost[1][:12]}), "
                        "as a partial or damaged clone does: fetch the whole repository and import again")
    return clone_git(repo, "archive", "--format=tar", commit)


def last_tag(repo: Path, commit: str) -> str:
    """The newest tag reachable from `commit` ("v1.2" -> "1.2"), "" when there is none."""
    done = subprocess.run(["git", "-C", str(repo), "describe", "--tags", "--abbrev=0", commit],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip().removeprefix("v") if done.returncode == 0 else ""


#: setuptools_scm's default tag pattern: an optional `name-` prefix, then the version (a `v` allowed).
_TAG = re.compile(r"^(?:[\w-]+-)?[vV]?(?P<version>\d+(?:\.\d+){0,2}[^+]*)(?:\+.*)?$")
_DESCRIBED = re.compile(r"^(?P<tag>.+)-(?P<distance>\d+)-g(?P<node>[0-9a-f]+)$")


def scm_version(repo: Path, commit: str, schemes: tuple[str, str], record: str = "") -> tuple[str, str]:
    """(version, how it was had): setuptools_scm's answer for a clean checkout of `commit`, from
    `git describe`, by the project's (version, local) schemes, as SWE-bench's environment installs it (clean,
    on the main branch): a project whose build asks git states no version in its tree. Where the clone holds no tag reachable from the commit (a fork copied without
    tags), the version is a development one of `record` (the dataset's X.Y), `X.Y.dev0+gNODE`: the
    distance from the tag is not known there."""
    described = _git(repo, "describe", "--tags", "--long", "--match", "*[0-9]*", commit).stdout.decode().strip()
    found = _DESCRIBED.match(described)
    tag = _TAG.match(found.group("tag")) if found else None
    if found and tag:
        distance, node = int(found.group("distance")), found.group("node")
        how = f"setuptools_scm's guess from the clone (`git describe`: {described})"
        base = tag.group("version")
    else:
        node = _git(repo, "rev-parse", "--short", commit).stdout.decode().strip()
        if not record or not node:
            return "", ""
        base, distance = record, -1
        how = f"a development version of the record's {record}: the clone holds no tag reachable from the commit"
    version_scheme, local_scheme = schemes
    public = base if distance == 0 else f"{base}.dev0" if distance < 0 else _next(base, version_scheme, distance)
    local = "" if distance == 0 or local_scheme in ("no-local-version", "dirty-tag") else f"+g{node}"
    return public + local, how


def _next(tag: str, scheme: str, distance: int) -> str:
    """The development version after `tag`, `distance` commits on, by setuptools_scm's version scheme."""
    if scheme == "post-release":
        return f"{tag}.post{distance}"
    if scheme == "no-guess-dev":
        return f"{tag}.post1.dev{distance}"
    if scheme == "only-version":
        return tag
    release = [int(p) for p in re.findall(r"\d+", tag.split("+")[0])[:3]]
    if scheme == "release-branch-semver" and re.fullmatch(r"\d+(\.\d+)*", tag):
        # off a release branch (SWE-bench installs from the main branch): the next minor
        release = (release + [0, 0])[:2]
        return f"{release[0]}.{release[1] + 1}.0.dev{distance}"
    if scheme == "python-simplified-semver" and re.fullmatch(r"\d+(\.\d+)*", tag):
        release = (release + [0, 0, 0])[:3]
        return f"{release[0]}.{release[1]}.{release[2] + 1}.dev{distance}"
    # guess-next-dev (the default) and any scheme not named above: a development tag (astropy's `v5.1.dev`)
    # is the release it leads to; any other, its last number plus one
    if (dev := re.search(r"[.-]?dev0?$", tag)) is not None:
        return f"{tag[:dev.start()]}.dev{distance}"
    last = list(re.finditer(r"\d+", tag))[-1]
    return f"{tag[:last.start()]}{int(last.group()) + 1}{tag[last.end():]}.dev{distance}"


def commit_date(repo: Path, commit: str) -> str:
    """The commit's date (ISO 8601), "" when git cannot say."""
    done = subprocess.run(["git", "-C", str(repo), "show", "-s", "--format=%cI", commit],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else ""
