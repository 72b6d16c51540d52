"""`endstate tasks import swebench` on the shipped SWE-bench-format file, in real sandboxes.

tests/data/swebench holds three real boltons fixes (instances.jsonl) and the trees
they start from (boltons.bundle); see tests/data/swebench/README.md.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from cli_runner import run_endstate
from e2e_helpers import ROOT

from endstate.sandbox import DEFAULT_IMAGE
from endstate.task import load_suite

pytestmark = [pytest.mark.docker, pytest.mark.slow]

DATA = ROOT / "tests" / "data" / "swebench"


def test_the_shipped_instances_become_checked_tasks_and_broken_ones_are_listed(tmp_path):
    repos = tmp_path / "repos"
    subprocess.run(["git", "clone", "-q", "--bare", str(DATA / "boltons.bundle"), str(repos / "mahmoud__boltons.git")],
                   check=True)
    lines = (DATA / "instances.jsonl").read_text().splitlines()[:2]  # the third is the same path once more
    good = [json.loads(line)["instance_id"] for line in lines]
    unappliable = dict(json.loads(lines[1]), instance_id="broken-patch",
                       patch=json.loads(lines[1])["patch"].replace("yield [src]", "yield [source]"))
    # A regression test that already passes at base_commit: the fixture would PASS.
    passing = json.loads(json.loads(lines[1])["PASS_TO_PASS"])
    inert = dict(json.loads(lines[1]), instance_id="inert-holdout", FAIL_TO_PASS=json.dumps(passing[:1]))
    source = tmp_path / "instances.jsonl"
    source.write_text("\n".join(lines + [json.dumps(unappliable), json.dumps(inert)]) + "\n")

    ran = run_endstate("tasks", "import", "swebench", str(source), "--repos", str(repos), "--out",
                       str(tmp_path / "out"),
                       "-j", "2", "--no-adequacy")

    assert ran.code == 1, ran
    assert "2 task(s) written" in ran.out and "2 instance(s) not written" in ran.out, ran
    assert "Traceback" not in ran.err
    rows = {line.split()[1]: line for line in ran.out.splitlines()
            if line.startswith(("ok   ", "FAIL ")) and " fixture=" in line}
    assert sorted(rows) == sorted(good + ["inert-holdout"]) and rows["inert-holdout"].startswith("FAIL "), ran
    for instance in good:  # fixture FAIL, solution PASS, every hack FAIL caught by its grader, reference reaches it
        assert rows[instance].startswith(f"ok   {instance:40s} fixture=fail[holdout], solution=pass, "
                                         "hack:delete-unrelated=fail[changed_paths_within], "
                                         "hack:edit-tests=fail[files_unchanged], hack:skip-failing=fail[no_new_skips], "
                                         "hack:special-case=fail[holdout], "), ran
        assert rows[instance].endswith("reference=solution"), ran
    assert ("not written: instance broken-patch: field `patch` does not apply at base_commit: hunk 1 "
            "(`@@ -158,7 +158,7 @@ def split_iter(src, sep=None, maxsplit=None):`) of boltons/iterutils.py does not "
            "apply: line 161 is '            yield [src]' where the diff expects '            yield [source]'") in ran.err
    assert "not written: instance inert-holdout does not check out: fixture: expected fail, got pass" in ran.err
    # Each instance's one line as it is settled, with the seconds of its work, and the run's summary by cause.
    settled = {line.split()[1]: line for line in ran.out.splitlines() if line.startswith(("ok       ", "refused  "))}
    assert sorted(settled) == sorted(good + ["broken-patch", "inert-holdout"]), ran
    assert all(re.fullmatch(rf"ok       {i}  [1-9]\d* s", settled[i]) for i in good), ran
    assert re.match(r"refused  inert-holdout  [1-9]\d* s  does not check out: fixture: expected fail, got pass",
                    settled["inert-holdout"]), ran
    assert ("checked out 2 of 4; refused: 1 does not check out (fixture); 1 field `patch` does not apply at "
            "base_commit") in ran.out.splitlines(), ran
    tasks, errors = load_suite(tmp_path / "out")
    assert not errors and sorted(t.id for t in tasks) == sorted(good)  # nothing left of the two not written


def test_an_instance_whose_tests_need_a_declared_dependency_gets_an_image_of_its_own(tmp_path):
    """The second shipped instance, at a base where boltons declares `six` and its conftest
    imports it: the default image has no six, so the task checks out only in an image of its
    own, built offline from the wheels the import pins."""
    clone = tmp_path / "repos" / "mahmoud__boltons"
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(DATA / "boltons.bundle"), str(clone)], check=True)
    raw = json.loads((DATA / "instances.jsonl").read_text().splitlines()[1])
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", raw["base_commit"]], check=True)
    pyproject = clone / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('requires-python = ">=3.7"\n',
                                                       'requires-python = ">=3.7"\ndependencies = ["six"]\n', 1))
    with open(clone / "tests" / "conftest.py", "a") as conftest:
        conftest.write("\nimport six  # noqa: F401 (the tests need the project's declared dependency)\n")
    subprocess.run(["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-q", "-am",
                    "boltons needs six"], check=True)
    base = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    source = tmp_path / "instances.jsonl"
    source.write_text(json.dumps(dict(raw, instance_id="needs-six", base_commit=base)) + "\n")

    ran = run_endstate("tasks", "import", "swebench", str(source), "--repos", str(tmp_path / "repos"),
                       "--out", str(tmp_path / "out"), "--no-adequacy")

    assert ran.code == 0 and "1 task(s) written" in ran.out, ran
    row = next(line for line in ran.out.splitlines() if line.startswith(("ok   ", "FAIL ")))
    assert row.startswith("ok   needs-six") and "fixture=fail[holdout], solution=pass" in row, ran
    assert row.endswith("reference=solution"), ran
    task = tmp_path / "out" / "needs-six"
    assert '[sandbox]\ndockerfile = "image/Dockerfile"' in (task / "task.toml").read_text()
    pinned = (task / "image" / "requirements.txt").read_text().splitlines()
    names = [line.split("==")[0] for line in pinned]
    # six, and the project's own pytest (the newest: it pins none) in place of the sandbox's.
    assert {"pip", "six", "pytest", "pluggy"} <= set(names) and all("--hash=sha256:" in p for p in pinned)


# -- a project in its own test environment -------------------------------------------------------
# Like attrs: a src layout (beside a top-level package) shipping `attr` as well as its own name, a
# version written by setuptools_scm and read back through importlib.metadata, a pytest plugin's
# fixture, `filterwarnings = error`, tests that write under HOME, release and typing tools among
# its test extras; and one base commit per pytest it pins.
_PYPROJECT = """\
[build-system]
requires = ["setuptools>=64", "setuptools_scm>=8"]
build-backend = "setuptools.build_meta"

[project]
name = "tinyattrs"
dynamic = ["version"]

[project.optional-dependencies]
tests = ["pytest{pin}", "pytest-mock", "tbump", "types-setuptools", "mypy"]

[tool.setuptools.packages.find]
where = ["src"]

[tool.setuptools_scm]
version_file = "src/tinyattrs/_version.py"

[tool.pytest.ini_options]
filterwarnings = ["error"]
"""
_TESTS = """\
import os
import pathlib

import pytest

import attr
import tinyattrs
from tinyattrs import clamp


def test_the_installed_version():
    # setuptools_scm's guess from the clone at the base commit (tagged v2.4, or one commit past it), not the record's
    assert tinyattrs.__version__ == tinyattrs.file_version and tinyattrs.__version__.split("+")[0] in ("2.4", "2.5.dev1")


def test_attr_is_the_projects_own():
    assert pathlib.Path(attr.__file__).resolve().is_relative_to(pathlib.Path.cwd().resolve()), attr.__file__


def test_home_is_writable():
    cache = pathlib.Path(os.path.expanduser("~/.cache/tinyattrs"))
    cache.mkdir(parents=True)
    (cache / "seen").write_text("yes")


def test_a_plugin_fixture(mocker):
    mocker.patch.object(tinyattrs, "clamp", return_value=7)
    assert tinyattrs.clamp(1, 2, 3) == 7


def test_clamp_low():
    assert clamp(-1, 0, 10) == 0


@pytest.mark.parametrize("x", [1, 2])
def test_clamp_inside(x):
    assert clamp(x, 0, 10) == x


@pytest.mark.parametrize("words", ["a few words"])
def test_spaced(words):
    assert clamp(len(words), 0, 100) == 11
"""
_HELD = """

def test_clamp_high():
    assert clamp(11, 0, 10) == 10


@pytest.mark.parametrize("x, hi", [(11, 10), (5, 3)])
def test_clamp_high_param(x, hi):
    assert clamp(x, 0, hi) == hi
"""


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@invalid", *args],
                          check=True, capture_output=True, text=True).stdout


def _own_environment_instances(tmp_path):
    repo = tmp_path / "repos" / "example__tinyattrs"
    (repo / "src" / "tinyattrs").mkdir(parents=True)
    (repo / "src" / "attr").mkdir()
    (repo / "bench").mkdir()
    (repo / "tests").mkdir()
    (repo / "bench" / "__init__.py").write_text("")
    (repo / "src" / "attr" / "__init__.py").write_text("from tinyattrs import clamp  # noqa: F401\n")
    (repo / "src" / "tinyattrs" / "__init__.py").write_text(
        "from importlib.metadata import version\n\nfrom tinyattrs._core import clamp\nfrom tinyattrs._version import "
        "version as file_version\n\n__version__ = version('tinyattrs')\n__all__ = ['clamp', 'file_version']\n")
    core = repo / "src" / "tinyattrs" / "_core.py"
    core.write_text("def clamp(x, lo, hi):\n    return max(lo, x)\n")
    (repo / "tests" / "test_core.py").write_text(_TESTS)
    (repo / ".gitignore").write_text("src/tinyattrs/_version.py\n")
    _git(repo, "init", "-q")
    instances = []
    for pin in ("==7.4.4", ">=9"):
        (repo / "pyproject.toml").write_text(_PYPROJECT.format(pin=pin))
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"pytest{pin}")
        base = _git(repo, "rev-parse", "HEAD").strip()
        if pin == "==7.4.4":
            _git(repo, "tag", "v2.4")
        core.write_text("def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n")
        patch = _git(repo, "diff")
        _git(repo, "checkout", "-q", "--", ".")
        (repo / "tests" / "test_core.py").write_text(_TESTS + _HELD)
        test_patch = _git(repo, "diff")
        _git(repo, "checkout", "-q", "--", ".")
        passing = ["test_the_installed_version", "test_attr_is_the_projects_own", "test_home_is_writable",
                   "test_a_plugin_fixture", "test_clamp_low", "test_clamp_inside[1]", "test_clamp_inside[2]",
                   "test_spaced[a"]  # as SWE-bench's log parser leaves an id with a space in it
        failing = ["test_clamp_high", "test_clamp_high_param[11-10]", "test_clamp_high_param[5-3]"]
        instances.append({
            "instance_id": f"tinyattrs-pytest{pin.strip('=>')}", "repo": "example/tinyattrs", "base_commit": base,
            "patch": patch, "test_patch": test_patch, "problem_statement": "clamp() ignores its upper bound",
            "FAIL_TO_PASS": json.dumps([f"tests/test_core.py::{name}" for name in failing]),
            "PASS_TO_PASS": json.dumps([f"tests/test_core.py::{name}" for name in passing]), "version": "2.5"})
    # An id of the dataset that names no test: the instance is refused, naming the nearest ids.
    typo = json.loads(instances[-1]["PASS_TO_PASS"]) + ["tests/test_core.py::test_clamp_insid[1]"]
    instances.append(dict(instances[-1], instance_id="tinyattrs-typo", PASS_TO_PASS=json.dumps(typo)))
    source = tmp_path / "instances.jsonl"
    source.write_text("".join(json.dumps(i) + "\n" for i in instances))
    return source


def test_a_project_checks_out_in_its_own_test_environment_under_pytest_7_and_9(tmp_path):
    source = _own_environment_instances(tmp_path)

    ran = run_endstate("tasks", "import", "swebench", str(source), "--repos", str(tmp_path / "repos"),
                       "--out", str(tmp_path / "out"), "-j", "2")

    assert ran.code == 1 and "2 task(s) written" in ran.out and "1 instance(s) not written" in ran.out, ran
    assert ("not written: instance tinyattrs-typo: field `PASS_TO_PASS`: 1 node id(s) name no test the task's image "
            "collects: tests/test_core.py::test_clamp_insid[1] (nearest: tests/test_core.py::test_clamp_inside[1]")\
        in ran.err, ran
    rows = [line for line in ran.out.splitlines() if line.startswith(("ok   ", "FAIL ")) and " fixture=" in line]
    assert len(rows) == 2, ran
    for row in rows:  # the guard, twins and canary hold under the project's own pytest, its plugin loaded
        assert row.startswith("ok   tinyattrs-pytest") and "fixture=fail[holdout], solution=pass" in row, ran
        assert "hack:special-case=fail[holdout]" in row and "hack:edit-tests=fail[files_unchanged]" in row, ran
        assert row.endswith("reference=solution"), ran
    # The import prints the adequacy of the tasks it kept: one row each after the check rows.
    assert "adequacy of 2 new task(s)" in ran.out, ran
    measured = [line for line in ran.out.splitlines() if line.startswith(("ok   ", "FAIL ")) and " made, " in line]
    assert sorted(line.split()[1] for line in measured) == sorted(row.split()[1] for row in rows), ran
    for pin, version in (("7.4.4", "pytest==7.4.4"), ("9", "pytest==9.")):
        task = tmp_path / "out" / f"tinyattrs-pytest{pin}"
        pinned = (task / "image" / "requirements.txt").read_text()
        assert version in pinned and "pytest-mock==" in pinned, pinned
        assert not any(tool in pinned for tool in ("tbump", "types-setuptools", "mypy")), pinned
        # The version file the build backend writes is in the fixture, as in an installed checkout.
        # Its version is setuptools_scm's from the clone: the tag at the first base commit, one commit on the
        # development version of the next (guess-next-dev), never the record's 2.5.
        stated = "'2.4'" if pin == "7.4.4" else "'2.5.dev1+g"
        assert f"__version__ = version = {stated}" in (task / "fixture" / "src/tinyattrs/_version.py").read_text()
        manifest = (task / "task.toml").read_text()
        # PASS_TO_PASS is read from the run of the file, as SWE-bench's run reads it; test_spaced[a few words]
        # (the dataset's `test_spaced[a`, as SWE-bench's log parser cut it at the space) is named in full.
        assert 'command = "PYTHONPATH=src python -m pytest -q tests/test_core.py", tests = [' in manifest \
            and '"tests/test_core.py::test_spaced[a few words]"], min_tests = 8' in manifest, manifest


def test_an_image_of_ones_own_is_given_with_dockerfile(tmp_path):
    """As `tasks new --dockerfile`: every task's image is built from the given file, whatever the
    project declares (here a package no wheel exists for), and its tests see that image."""
    clone = tmp_path / "repos" / "mahmoud__boltons"
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(DATA / "boltons.bundle"), str(clone)], check=True)
    raw = json.loads((DATA / "instances.jsonl").read_text().splitlines()[1])
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", raw["base_commit"]], check=True)
    pyproject = clone / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(
        'requires-python = ">=3.7"\n', 'requires-python = ">=3.7"\ndependencies = ["no-such-distribution-anywhere"]\n', 1))
    with open(clone / "tests" / "conftest.py", "a") as conftest:
        conftest.write("\nassert open('/etc/endstate-own-image').read() == 'mine\\n'\n")
    _git(clone, "commit", "-q", "-am", "boltons in an image of its own")
    source = tmp_path / "instances.jsonl"
    source.write_text(json.dumps(dict(raw, instance_id="own-image", base_commit=_git(clone, "rev-parse", "HEAD").strip()))
                      + "\n")
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(f"FROM {DEFAULT_IMAGE}\nRUN echo mine > /etc/endstate-own-image\n")

    ran = run_endstate("tasks", "import", "swebench", str(source), "--repos", str(tmp_path / "repos"),
                       "--out", str(tmp_path / "out"), "--dockerfile", str(dockerfile), "--no-adequacy")

    assert ran.code == 0 and "1 task(s) written" in ran.out, ran
    task = tmp_path / "out" / "own-image"
    assert (task / "image" / "Dockerfile").read_text() == dockerfile.read_text()
    assert not (task / "image" / "requirements.txt").exists()
    assert '[sandbox]\ndockerfile = "image/Dockerfile"' in (task / "task.toml").read_text()
