"""`tasks new` on the shapes real projects have: each a small local project standing in for one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from endstate.authoring._clones import base_tree
from endstate.authoring._fix import split_fix, submodule_trees
from endstate.authoring._new import new_task_from_fix
from endstate.authoring._systools import system_packages
from endstate.authoring._testcommand import COUNT_TIMEOUT_S, command_timeout
from endstate.checks._check import check_task
from endstate.errors import UserError
from endstate.run import resolve_graders
from endstate.sandbox import DEFAULT_IMAGE, FileEntry
from endstate.task import load_task
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
    said: list[str] = []  # the SWE-bench import says so and goes on, as the dataset's harness clones without them
    assert submodule_trees(clone, "HEAD", missing=said.append) == {}
    assert said == [f"left out of the fixture: {message}"]


def test_a_submodule_the_clone_lacks_is_taken_from_a_clone_of_its_repository_beside_it(with_submodule, tmp_path):
    """astropy 1.3-3.1 build through astropy_helpers, a submodule a mirror of astropy lacks: a clone of
    astropy/astropy-helpers in the folder of clones `tasks import swebench --repos` reads serves it, offline."""
    repo, data = with_submodule
    git(repo, "config", "-f", ".gitmodules", "submodule.tests/cases.url", "https://github.invalid/acme/cases.git")
    git(repo, "commit", "-q", "-am", "The submodule's URL as a hosted one")
    repos = tmp_path / "repos"
    for source, name in ((repo, "acme__proj.git"), (data, "acme__cases.git")):
        subprocess.run(["git", "clone", "-q", "--bare", str(source), str(repos / name)], check=True)
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    said: list[str] = []
    assert "tests/cases/valid/one.toml" not in base_tree(repos / "acme__proj.git", commit, said.append)
    assert said and "submodule tests/cases" in said[0]  # no clone beside it to look in: left out, and said
    said.clear()
    tree = base_tree(repos / "acme__proj.git", commit, said.append, repos)
    assert tree["tests/cases/valid/one.toml"].data == b"a = 1\n" and said == []


# -- a suite that takes minutes (attrs' ~1,300 tests) --------------------------------------------
def test_a_large_suite_gets_a_command_timeout_scaled_by_its_count():
    assert command_timeout(5) is None and command_timeout(240) is None  # the sandbox's 120 s
    assert command_timeout(241) == 180  # whole minutes
    assert command_timeout(1300) == 660  # 120 s + 0.5 s for each of 1,060 tests past 240
    assert COUNT_TIMEOUT_S >= 1200  # counting gives a real suite its minutes


# -- a program the tests run that the sandbox lacks (click's pager tests pipe to `less`) ---------------
PAGER = 'import subprocess\n\n\ndef page(text):\n    return subprocess.run(["less", "-F"], input=text, text=True,\n' \
        '                          capture_output=True, check=True).stdout\n'


def test_the_programs_a_project_runs_are_read_from_its_code():
    project = {"pkg/pager.py": PAGER,
               "pkg/build.py": "import os, shutil\nos.system('make -C docs')\nFOUND = shutil.which('zip')\n",
               "pkg/words.py": "FIELDS = ('file', 'line')\nTEXT = 'less is more'\nprint('make it so')\n",
               "tests/test_x.py": "import pytest\n\n@pytest.mark.parametrize('m', ['patch', 'post'])\ndef test(m): pass\n"}
    tree = {path: FileEntry(0o644, text.encode()) for path, text in project.items()}
    # ('patch', 'post') leads a list: a program's name it could be; phrases and plain words are not.
    assert system_packages(tree) == ["less", "make", "patch", "zip"]
    assert system_packages({"pkg/words.py": tree["pkg/words.py"]}) == []


@pytest.mark.docker
def test_a_task_whose_tests_run_less_gets_it_in_its_image(tmp_path):
    repo = _project(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/pager.py": PAGER, "pkg/chunking.py": BUGGY,
                                        "tests/__init__.py": "", "README.md": "# pkg\n",
                                        "tests/test_pager.py": "from pkg.pager import page\n\n\ndef test_page():\n"
                                                               "    assert page('hello\\n') == 'hello\\n'\n",
                                        "tests/test_chunking.py": TESTS})
    (repo / "pkg/chunking.py").write_text(FIXED)
    (repo / "tests/test_chunking.py").write_text(REGRESSION)
    git(repo, "commit", "-q", "-am", "Keep the short last chunk")
    folder = new_task_from_fix("bugfix-pager", repo=repo, fix="HEAD", suite=tmp_path / "suite", backend="docker",
                               image=DEFAULT_IMAGE)  # counting ran test_page, which needs less, and it passed
    assert (folder / "image/system-packages.txt").read_text() == "less\n"
    assert not (folder / "image/requirements.txt").exists()
    task = load_task(folder)
    assert task.manifest.sandbox.dockerfile == "image/Dockerfile"
    assert {s.name.rsplit(":", 1)[1]: s.args for s in task.manifest.graders}["tests_pass"]["min_tests"] == 6


# -- a suite that changes its own fixture files (jinja's loader test sets a template's mtime) -----------
PERMISSIONS = '''\
import os

import pytest


def test_the_suite_may_change_its_own_data_files():
    os.utime("tests/res/page.html", (1, 1))
    with open("tests/res/page.html", "a") as page:
        page.write("more")


def test_code_and_held_out_files_stay_read_only():
    for path in ("pkg/chunking.py", "tests/test_chunking.py", "tests/cases/short.txt"):
        with pytest.raises(PermissionError):
            open(path, "a")
'''


@pytest.mark.docker
def test_data_files_are_the_test_users_and_code_and_held_out_files_are_not(tmp_path):
    repo = _project(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/chunking.py": BUGGY, "tests/__init__.py": "",
                                        "tests/res/page.html": "<p>", "tests/test_perms.py": PERMISSIONS,
                                        "tests/test_chunking.py": TESTS, "README.md": "# pkg\n"})
    (repo / "pkg/chunking.py").write_text(FIXED)
    (repo / "tests/test_chunking.py").write_text(REGRESSION + "\n\ndef test_cases():\n"
                                                 "    assert open('tests/cases/short.txt').read() == '3'\n"
                                                 "    assert open('tests/res/page.html').read().startswith('<p>')\n")
    (repo / "tests/cases").mkdir()
    (repo / "tests/cases/short.txt").write_text("3")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Keep the short last chunk")
    # Counting runs every test on the solution, held-out files staged: these pass only under the rule.
    folder = new_task_from_fix("bugfix-perms", repo=repo, fix="HEAD", suite=tmp_path / "suite", backend="docker",
                               image=DEFAULT_IMAGE)
    assert (folder / "holdout/tests/cases/short.txt").exists()
    task = load_task(folder)
    assert {s.name.rsplit(":", 1)[1]: s.args for s in task.manifest.graders}["tests_pass"]["min_tests"] == 8
    # The held-out run in halves first wipes what the test user may write: never its own copy's data files.
    report = check_task(task, resolve_graders(task), "docker", DEFAULT_IMAGE)
    assert report.ok, report


# -- a src layout whose tests start a Python of their own (click's test_light_imports) ---------------
@pytest.mark.docker
def test_a_python_the_tests_start_imports_the_project_from_src(tmp_path):
    child = ("import subprocess, sys\n\n\ndef test_child_imports_the_project():\n"
             "    subprocess.run([sys.executable, '-c', 'import pkg.chunking'], check=True)\n")
    repo = _project(tmp_path / "repo", {"src/pkg/__init__.py": "", "src/pkg/chunking.py": BUGGY,
                                        "tests/test_child.py": child, "tests/test_chunking.py": TESTS,
                                        "README.md": "# pkg\n"})
    (repo / "src/pkg/chunking.py").write_text(FIXED)
    (repo / "tests/test_chunking.py").write_text(REGRESSION)
    git(repo, "commit", "-q", "-am", "Keep the short last chunk")
    folder = new_task_from_fix("bugfix-child", repo=repo, fix="HEAD", suite=tmp_path / "suite", backend="docker",
                               image=DEFAULT_IMAGE)
    args = {s.name.rsplit(":", 1)[1]: s.args for s in load_task(folder).manifest.graders}["tests_pass"]
    assert args == {"command": "PYTHONPATH=src python -m pytest -q tests", "min_tests": 6}


# -- a flat layout whose tests start a Python elsewhere (pylint's `python -m pylint` in a tmpdir) ---------
@pytest.mark.docker
def test_a_python_the_tests_start_in_another_folder_imports_the_project_at_the_top(tmp_path):
    """SWE-bench installs the project, so a Python its tests start in a scratch folder imports it; here the
    workspace is the tests' PYTHONPATH, as `src` is for a src layout."""
    child = ("import subprocess, sys\n\n\ndef test_child_imports_the_project(tmp_path):\n"
             "    subprocess.run([sys.executable, '-c', 'import pkg.chunking'], check=True, cwd=tmp_path)\n")
    repo = _project(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/chunking.py": BUGGY,
                                        "tests/test_child.py": child, "tests/test_chunking.py": TESTS,
                                        "README.md": "# pkg\n"})
    (repo / "pkg/chunking.py").write_text(FIXED)
    (repo / "tests/test_chunking.py").write_text(REGRESSION)
    git(repo, "commit", "-q", "-am", "Keep the short last chunk")
    folder = new_task_from_fix("bugfix-child-flat", repo=repo, fix="HEAD", suite=tmp_path / "suite",
                               backend="docker", image=DEFAULT_IMAGE)
    args = {s.name.rsplit(":", 1)[1]: s.args for s in load_task(folder).manifest.graders}["tests_pass"]
    assert args == {"command": "python -m pytest -q tests", "min_tests": 6}  # the child's test not deselected


# -- a test the fix itself fails in the sandbox (requests' connect-timeout tests need a network) ----------
@pytest.mark.docker
def test_a_test_the_fix_fails_in_the_sandbox_is_deselected_by_id(tmp_path):
    many = "import pytest\n\n\n@pytest.mark.parametrize('n', range(60))\ndef test_many(n):\n    assert n >= 0\n"
    # In the file the fix changes (held out whole), but not one of the tests it holds out.
    network = ("\n\ndef test_needs_a_network():\n    import socket\n"
               "    socket.create_connection(('10.255.255.1', 80), timeout=5).close()\n")
    repo = _project(tmp_path / "repo", {"pkg/__init__.py": "", "pkg/chunking.py": BUGGY, "tests/__init__.py": "",
                                        "tests/test_many.py": many, "tests/test_chunking.py": TESTS + network,
                                        "README.md": "# pkg\n"})
    (repo / "pkg/chunking.py").write_text(FIXED)
    (repo / "tests/test_chunking.py").write_text(REGRESSION + network)
    git(repo, "commit", "-q", "-am", "Keep the short last chunk")
    said: list[str] = []
    folder = new_task_from_fix("bugfix-offline", repo=repo, fix="HEAD", suite=tmp_path / "suite", backend="docker",
                               image=DEFAULT_IMAGE, log=said.append)
    args = {s.name.rsplit(":", 1)[1]: s.args for s in load_task(folder).manifest.graders}["tests_pass"]
    assert args == {"command": "python -m pytest -q tests --deselect tests/test_chunking.py::test_needs_a_network",
                    "min_tests": 65}
    assert "left out of the task's test command: 1 test(s) that fail on the fix itself in the sandbox (they need " \
        "the network, which the sandbox does not have): tests/test_chunking.py::test_needs_a_network" in said
    assert args["command"] in (folder / "prompt.md").read_text() and args["command"] in (folder / "reference.toml").read_text()
