"""`tasks new` on the shapes real projects have: each a small local project standing in for one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from endstate.authoring._fix import split_fix
from endstate.authoring._testcommand import COUNT_TIMEOUT_S, command_timeout
from endstate.errors import UserError
from tests.authoring.test_new_task import BUGGY, FIXED, REGRESSION, TESTS, git


def _project(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Initial")
    return root


# -- a git submodule the tests read (tomlkit's toml-test) ----------------------------------------
@pytest.fixture
def with_submodule(tmp_path: Path) -> tuple[Path, Path]:
    data = _project(tmp_path / "cases", {"valid/one.toml": "a = 1\n"})
    repo = _project(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/chunking.py": BUGGY, "tests/__init__.py": "",
                                        "tests/test_chunking.py": TESTS, "README.md": "# pkg\n"})
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(data), "tests/cases")
    git(repo, "commit", "-q", "-m", "Cases as a submodule")
    (repo / "pkg/chunking.py").write_text(FIXED)
    (repo / "tests/test_chunking.py").write_text(REGRESSION)
    git(repo, "commit", "-q", "-am", "Keep the short last chunk")
    return repo, data


def test_a_submodule_is_in_the_fixture_at_the_commit_it_pins(with_submodule, tmp_path):
    repo, data = with_submodule
    (data / "valid/two.toml").write_text("b = 2\n")  # a later commit of the submodule is not taken
    git(data, "add", "-A")
    git(data, "commit", "-q", "-m", "More")
    split = split_fix(repo, "HEAD")  # the clone's own copy (.git/modules)
    assert split.fixture["tests/cases/valid/one.toml"].data == b"a = 1\n"
    assert "tests/cases/valid/two.toml" not in split.fixture
    # A clone whose submodule was never initialised: fetched from the URL .gitmodules gives.
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    assert not (clone / "tests/cases/valid").exists()
    assert split_fix(clone, "HEAD").fixture["tests/cases/valid/one.toml"].data == b"a = 1\n"


def test_a_submodule_that_cannot_be_had_is_one_clear_error(with_submodule, tmp_path):
    repo, data = with_submodule
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    data.rename(tmp_path / "gone")
    with pytest.raises(UserError) as caught:
        split_fix(clone, "HEAD")
    message = str(caught.value)
    assert "\n" not in message and "submodule tests/cases" in message and "submodule update --init" in message


# -- a suite that takes minutes (attrs' ~1,300 tests) --------------------------------------------
def test_a_large_suite_gets_a_command_timeout_scaled_by_its_count():
    assert command_timeout(5) is None and command_timeout(240) is None  # the sandbox's 120 s
    assert command_timeout(241) == 180  # whole minutes
    assert command_timeout(1300) == 660  # 120 s + 0.5 s for each of 1,060 tests past 240
    assert COUNT_TIMEOUT_S >= 1200  # counting gives a real suite its minutes
