"""The version setuptools_scm gives a project installed from its clone at a commit.

A project versioned by its VCS (setuptools_scm, or hatch-vcs, which runs it) states no version in
its tree: its build asks `git describe` and writes the answer into the version file it names. An
environment made from a clone at the record's commit (SWE-bench's) therefore holds a version such
as `3.7.0.dev1234+g1a2b3c4d`, not the record's `3.6`, and a test may read it (matplotlib's asserts
its version is nowhere in an SVG it writes: "3.6" is a coordinate there). The guess follows
setuptools_scm's version and local schemes, with the checkout clean and on the project's main
branch, as SWE-bench's is when it installs.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

__all__ = ["scm_version"]

#: setuptools_scm's default tag pattern: an optional `name-` prefix, then the version (a `v` allowed).
_TAG = re.compile(r"^(?:[\w-]+-)?[vV]?(?P<version>\d+(?:\.\d+){0,2}[^+]*)(?:\+.*)?$")
_DESCRIBED = re.compile(r"^(?P<tag>.+)-(?P<distance>\d+)-g(?P<node>[0-9a-f]+)$")


def scm_version(repo: Path, commit: str, schemes: tuple[str, str], record: str = "") -> tuple[str, str]:
    """(version, how it was had): setuptools_scm's answer for a clean checkout of `commit`, from
    `git describe`. Where the clone holds no tag reachable from the commit (a fork copied without
    tags), the version is a development one of `record` (the dataset's X.Y), `X.Y.dev0+gNODE`: the
    distance from the tag is not known there."""
    git = ["git", "--git-dir", str(repo)] if (repo / "objects").is_dir() and not (repo / ".git").exists() \
        else ["git", "-C", str(repo)]
    described = subprocess.run([*git, "describe", "--tags", "--long", "--match", "*[0-9]*", commit],
                               capture_output=True, text=True, check=False).stdout.strip()
    found = _DESCRIBED.match(described)
    tag = _TAG.match(found.group("tag")) if found else None
    if found and tag:
        distance, node = int(found.group("distance")), found.group("node")
        how = f"setuptools_scm's guess from the clone (`git describe`: {described})"
        base = tag.group("version")
    else:
        node = subprocess.run([*git, "rev-parse", "--short", commit], capture_output=True, text=True,
                              check=False).stdout.strip()
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
