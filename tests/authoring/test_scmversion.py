"""The version a VCS-versioned project has once installed from its clone: setuptools_scm's guess from
`git describe`, by the project's own version and local schemes, not the dataset's X.Y."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from endstate.authoring._clones import scm_version
from endstate.authoring._installed import scm_schemes
from endstate.sandbox._tree import FileEntry, Tree


def files(mapping: dict[str, str]) -> Tree:
    return {path: FileEntry(0o644, text.encode()) for path, text in mapping.items()}


def git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@a", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@a", "PATH": "/usr/bin:/bin", "HOME": str(repo)}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


@pytest.fixture
def clone(tmp_path) -> Path:
    """A repository: two commits, tag v3.5.2, then three more commits."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    for n in range(5):
        (repo / "f").write_text(str(n))
        git(repo, "add", "f")
        git(repo, "commit", "-qm", f"c{n}")
        if n == 1:
            git(repo, "tag", "v3.5.2")
            git(repo, "tag", "not-a-version")  # `--match *[0-9]*` passes it by, as setuptools_scm's does
    return repo


def test_schemes_are_read_where_the_build_takes_its_version_from_the_vcs():
    matplotlib = files({"setup.py": "setup(name='matplotlib', use_scm_version={'version_scheme': "
                                    "'release-branch-semver', 'local_scheme': 'node-and-date', "
                                    "'write_to': 'lib/matplotlib/_version.py'})\n"})
    assert scm_schemes(matplotlib) == ("release-branch-semver", "node-and-date")
    assert scm_schemes(files({"setup.py": "setup(use_scm_version=True)\n"})) == ("guess-next-dev", "node-and-date")
    pytest_like = files({"pyproject.toml": '[tool.setuptools_scm]\nwrite_to = "src/_pytest/_version.py"\n'})
    assert scm_schemes(pytest_like) == ("guess-next-dev", "node-and-date")
    hatch = files({"pyproject.toml": '[tool.hatch.version]\nsource = "vcs"\n'
                                     '[tool.hatch.version.raw-options]\nlocal_scheme = "no-local-version"\n'})
    assert scm_schemes(hatch) == ("guess-next-dev", "no-local-version")
    assert scm_schemes(files({"pyproject.toml": '[project]\nname = "x"\nversion = "1.0"\n'})) is None
    assert scm_schemes(files({"setup.py": "setup(name='x', version='1.0')\n"})) is None


@pytest.mark.parametrize("schemes, expected", [
    (("guess-next-dev", "node-and-date"), "3.5.3.dev3+g{node}"),
    (("release-branch-semver", "node-and-date"), "3.6.0.dev3+g{node}"),
    (("python-simplified-semver", "no-local-version"), "3.5.3.dev3"),
    (("post-release", "node-and-date"), "3.5.2.post3+g{node}"),
    (("no-guess-dev", "dirty-tag"), "3.5.2.post1.dev3"),
])
def test_a_commit_past_a_tag_gets_setuptools_scm_s_development_version(clone, schemes, expected):
    node = git(clone, "describe", "--tags", "--long", "--match", "*[0-9]*").rsplit("-g", 1)[1]
    version, how = scm_version(clone, "HEAD", schemes, record="3.5")
    assert version == expected.format(node=node)
    assert "git describe" in how and "v3.5.2-3-g" in how


def test_a_development_tag_leads_to_its_release(clone):
    """astropy tags its main branch `v5.1.dev` once 5.0 branches off: setuptools_scm counts toward 5.1."""
    git(clone, "tag", "v3.6.dev", "HEAD~1")
    assert scm_version(clone, "HEAD", ("guess-next-dev", "no-local-version"))[0] == "3.6.dev1"
    git(clone, "tag", "9.2.0.dev0", "HEAD")
    assert scm_version(clone, "HEAD", ("guess-next-dev", "node-and-date"))[0] == "9.2.0.dev0"


def test_a_tagged_commit_is_its_tag_and_a_bare_clone_is_read_too(clone, tmp_path):
    assert scm_version(clone, "v3.5.2", ("release-branch-semver", "node-and-date"))[0] == "3.5.2"
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(clone), str(bare)], check=True)
    assert scm_version(bare, "HEAD", ("guess-next-dev", "node-and-date"))[0].startswith("3.5.3.dev3+g")


def test_a_clone_without_tags_gives_a_development_version_of_the_record_s(clone):
    """A fork copied without tags: the record's X.Y stands for the tag; the version still carries the
    commit, as every clean checkout's does, never the bare X.Y a test may find in its own output."""
    git(clone, "tag", "-d", "v3.5.2")
    node = git(clone, "rev-parse", "--short", "HEAD")
    version, how = scm_version(clone, "HEAD", ("release-branch-semver", "node-and-date"), record="3.6")
    assert version == f"3.6.dev0+g{node}" and "no tag" in how
    assert scm_version(clone, "HEAD", ("guess-next-dev", "node-and-date")) == ("", "")
