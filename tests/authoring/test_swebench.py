"""`tasks import swebench`: instances decoded strictly, and task folders made from a local clone.

The clone is tests/data/swebench/boltons.bundle (three real boltons fixes); these
tests need git but no sandbox. The Docker check of the shipped file is in
tests/e2e/test_swebench_import.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import msgspec
import pytest
from cli_runner import run_endstate

from endstate.authoring._clones import base_tree
from endstate.authoring._swebench import (
    _MATPLOTLIB_FONTS,
    Instance,
    _at_setup_commit,
    _passing_on_the_fix,
    find_clone,
    read_instances,
    write_instance,
)
from endstate.authoring._swebenchenv import swebench_env
from endstate.errors import UserError
from endstate.task import load_task

DATA = Path(__file__).resolve().parents[1] / "data" / "swebench"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def shipped() -> list[dict]:
    return [json.loads(line) for line in (DATA / "instances.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def repos(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("repos")
    subprocess.run(["git", "clone", "-q", "--bare", str(DATA / "boltons.bundle"), str(root / "mahmoud__boltons.git")],
                   check=True)
    return root


def _committed(clone: Path, message: str) -> str:
    """Make `clone` a git repository of one commit holding all it has; that commit's hash."""
    git = ["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", message], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()


def _write(tmp_path: Path, lines: list) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def test_the_shipped_file_decodes_in_both_forms_of_the_test_lists(tmp_path):
    first = shipped()[0]
    as_list = dict(first, instance_id="as-list", FAIL_TO_PASS=json.loads(first["FAIL_TO_PASS"]),
                   PASS_TO_PASS=json.loads(first["PASS_TO_PASS"]))
    instances, bad = read_instances(_write(tmp_path, [first, "", as_list]))
    assert bad == []
    assert [(n, i.instance_id) for n, i in instances] == [(1, first["instance_id"]), (3, "as-list")]


@pytest.mark.parametrize("change, message", [
    ({"FAIL_TO_PASS": 3}, "field `FAIL_TO_PASS`: Expected `str | array`, got `int`"),
    ({"PASS_TO_PASS": "[1, 2]"}, "field `PASS_TO_PASS` is a string but not a JSON list of strings"),
    ({"FAIL_TO_PASS": ["test_thing (tests.TestX)"]}, "field `FAIL_TO_PASS` holds 'test_thing (tests.TestX)', which "
                                                     "is not a pytest node id"),
    ({"base_commit": None}, "field `base_commit`: Expected `str`, got `null`"),
    ({"patch": ...}, "missing field `patch`"),
    ({"spelled_wrong": 1}, "unknown field `spelled_wrong`"),
    # SWE-bench Multilingual's records (its other languages' parsers) are named as such, not as bad ids alone.
    ({"repo": "jqlang/jq", "log_parser": "parse_log_jq", "FAIL_TO_PASS": ["tests/shtest"]},
     "jqlang/jq's tests are not Python's: SWE-bench reads them with parse_log_jq, none of its Python repositories' "
     "parsers (field `FAIL_TO_PASS` holds 'tests/shtest', which is not a pytest node id"),
    ({"log_parser": "parse_log_pytest_v2", "FAIL_TO_PASS": ["t.py"]}, "field `FAIL_TO_PASS` holds 't.py', which"),
])
def test_a_bad_instance_is_named_with_its_field_and_the_others_are_kept(tmp_path, change, message):
    good, broken = shipped()[0], dict(shipped()[1], **change)
    broken = {k: v for k, v in broken.items() if v is not ...}
    instances, bad = read_instances(_write(tmp_path, [good, broken, "{not json"]))
    assert [i.instance_id for _, i in instances] == [good["instance_id"]]
    assert len(bad) == 2
    assert bad[0].line == 2 and bad[0].instance_id == broken["instance_id"]
    assert f"line 2 (instance {broken['instance_id']}): {message}" in bad[0].reason
    assert bad[1].line == 3 and "not a JSON object" in bad[1].reason


@pytest.mark.parametrize("repo, ids, wrong", [
    ("django/django", ["test_x (a.tests.T)", "A docstring's first line.", "test_y (a.tests.T.test_y)"], "\n"),
    ("sympy/sympy", ["test_issue_11617", "test_point3D"], "tests/test_x.py::test_y"),
])
def test_django_and_sympy_ids_are_their_runners_own(tmp_path, repo, ids, wrong):
    good = dict(shipped()[0], repo=repo, FAIL_TO_PASS=json.dumps(ids), PASS_TO_PASS="[]")
    bad_one = dict(shipped()[1], repo=repo, FAIL_TO_PASS=[wrong], PASS_TO_PASS=[])
    instances, bad = read_instances(_write(tmp_path, [good, bad_one]))
    assert [i.instance_id for _, i in instances] == [good["instance_id"]]
    assert f"field `FAIL_TO_PASS` holds {wrong!r}, which is not a" in bad[0].reason


def test_an_instance_twice_is_listed_once_and_kept_once(tmp_path):
    first = shipped()[0]
    instances, bad = read_instances(_write(tmp_path, [first, first]))
    assert [n for n, _ in instances] == [1]
    assert [(b.line, b.instance_id) for b in bad] == [(2, first["instance_id"])]


def test_clones_are_found_by_the_usual_names(tmp_path, repos):
    assert find_clone(repos, "mahmoud/boltons") == repos / "mahmoud__boltons.git"
    with pytest.raises(UserError, match=r"no clone of mahmoud/other under .* \(looked for mahmoud__other\[.git\], "
                                        r"mahmoud/other\[.git\], other\[.git\]\)"):
        find_clone(repos, "mahmoud/other")


def test_a_task_is_the_base_tree_the_patch_and_the_test_patch_by_node_id(tmp_path, repos):
    raw = shipped()[1]
    instance = read_instances(_write(tmp_path, [raw]))[0][0][1]
    task = load_task(write_instance(instance, repos, tmp_path / "out"))
    fixture = task.fixture()
    assert "LICENSE" in fixture and ".git" not in {p.split("/")[0] for p in fixture}
    assert (task.root / "solution.diff").read_text() == raw["patch"]
    assert sorted(p for p in task.solution() if task.solution()[p] != fixture.get(p)) == ["boltons/iterutils.py"]
    assert sorted(task.holdout()) == ["tests/test_iterutils.py"]
    args = {spec.name.rsplit(":", 1)[1]: spec.args for spec in task.manifest.graders}
    passing, failing = json.loads(raw["PASS_TO_PASS"]), json.loads(raw["FAIL_TO_PASS"])
    # PASS_TO_PASS read from the run of the test patch's files, as SWE-bench's run reads it; FAIL_TO_PASS by node id.
    assert args["tests_pass"] == {"command": "python -m pytest -q tests/test_iterutils.py", "tests": passing,
                                  "min_tests": len(passing)}
    assert args["holdout"] == {"command": "python -m pytest -q " + " ".join(failing), "min_tests": len(failing)}
    assert task.prompt.startswith(raw["problem_statement"])
    hacks = task.hacks()
    assert sorted(hacks) == ["delete-unrelated", "edit-tests", "skip-failing", "special-case"]
    assert all((h.folder / "overlay.diff").is_file() for n, h in hacks.items() if n != "delete-unrelated")
    assert task.manifest.sandbox.memory_mb == 4096  # SWE-bench's harness sets none; the default 1 GiB is ours
    assert task.manifest.sandbox.command_timeout == 300  # its harness gives a run 30 minutes; ours 120 s a command


def _instance(tmp_path: Path, **change) -> Instance:
    return read_instances(_write(tmp_path, [dict(shipped()[0], **change)]))[0][0][1]


@pytest.mark.parametrize("change, message", [
    ({"base_commit": "0" * 40}, "base_commit 0000000000000000000000000000000000000000 is not in"),
    ({"repo": "mahmoud/gone"}, "no clone of mahmoud/gone"),
    ({"FAIL_TO_PASS": "[]"}, "field `FAIL_TO_PASS` is empty"),
    ({"patch": "--- a/boltons/strutils.py\n+++ b/boltons/strutils.py\n@@ -1 +1 @@\n-nothing like it\n+x\n"},
     r"field `patch` does not apply at base_commit: hunk 1 \(`@@ -1 \+1 @@`\) of boltons/strutils.py does not apply"),
    ({"test_patch": shipped()[0]["patch"]}, "fields `patch` and `test_patch` both change boltons/strutils.py"),
])
def test_an_instance_that_cannot_be_made_says_why_and_leaves_nothing(tmp_path, repos, change, message):
    with pytest.raises(UserError, match=message):
        write_instance(_instance(tmp_path, **change), repos, tmp_path / "out")
    assert not (tmp_path / "out" / shipped()[0]["instance_id"]).exists()


def test_a_src_layout_project_is_run_its_own_way_over_the_same_node_ids(tmp_path):
    clone = tmp_path / "repos" / "me__calc"
    (clone / "src" / "calc").mkdir(parents=True)
    (clone / "tests").mkdir()
    (clone / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return a - b\n")
    (clone / "tests" / "test_calc.py").write_text("from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n")
    (clone / "README.md").write_text("calc\n")
    base = _committed(clone, "calc")
    line = {
        "instance_id": "me__calc-1", "repo": "me/calc", "base_commit": base, "problem_statement": "add subtracts",
        "patch": "--- a/src/calc/__init__.py\n+++ b/src/calc/__init__.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
                 "-    return a - b\n+    return a + b\n",
        "test_patch": "--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -4,2 +4,6 @@\n def test_zero():\n"
                      "     assert add(0, 0) == 0\n+\n+\n+def test_two():\n+    assert add(1, 1) == 2\n",
        "FAIL_TO_PASS": ["tests/test_calc.py::test_two"], "PASS_TO_PASS": ["tests/test_calc.py::test_zero"],
    }
    instance = read_instances(_write(tmp_path, [line]))[0][0][1]
    task = load_task(write_instance(instance, tmp_path / "repos", tmp_path / "out"))
    args = {spec.name.rsplit(":", 1)[1]: spec.args for spec in task.manifest.graders}
    assert args["tests_pass"] == {"command": "PYTHONPATH=src python -m pytest -q tests/test_calc.py",
                                  "tests": ["tests/test_calc.py::test_zero"], "min_tests": 1}
    assert args["holdout"] == {"command": "PYTHONPATH=src python -m pytest -q tests/test_calc.py::test_two",
                               "min_tests": 1}


def test_the_command_lists_bad_lines_and_unmade_instances_and_exits_non_zero(tmp_path, repos):

    bad_field = dict(shipped()[0], FAIL_TO_PASS=3)
    no_clone = dict(shipped()[1], repo="someone/else")
    source = _write(tmp_path, [bad_field, no_clone])
    ran = run_endstate("tasks", "import", "swebench", str(source), "--repos", str(repos), "--out",
                       str(tmp_path / "out"))
    assert ran.returncode == 2, ran
    assert "Traceback" not in ran.stderr
    assert (f"not written: {source} line 1 (instance {bad_field['instance_id']}): field `FAIL_TO_PASS`: "
            "Expected `str | array`, got `int`") in ran.stderr
    assert f"not written: instance {no_clone['instance_id']}: no clone of someone/else under" in ran.stderr
    assert "0 task(s) written" in ran.stdout and "2 instance(s) not written" in ran.stdout


def test_why_an_instance_was_not_written_is_one_capped_line_naming_the_field(tmp_path, repos):
    from endstate.authoring._swebench import REASON_MAX, import_swebench

    long_line = "x = '" + "y" * 55_000 + "'"
    patch = f"--- a/boltons/strutils.py\n+++ b/boltons/strutils.py\n@@ -1 +1 @@\n-{long_line}\n+x\n"
    source = _write(tmp_path, [dict(shipped()[0], patch=patch)])
    report = import_swebench(source, repos, tmp_path / "out", backend="docker", image="unused")
    [skipped] = report.skipped
    assert "field `patch` does not apply at base_commit" in skipped.reason and "\n" not in skipped.reason
    assert len(skipped.reason) <= REASON_MAX + 100 and skipped.reason.endswith("..."), len(skipped.reason)


def test_a_unittest_only_project_is_run_by_pytest_over_the_node_ids(tmp_path):
    # more-itertools 10.2.0: tests written for unittest, named by the dataset as pytest names them.
    clone = tmp_path / "repos" / "me__calc"
    (clone / "tests").mkdir(parents=True)
    (clone / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (clone / "README.md").write_text("calc\n")
    (clone / "tests" / "__init__.py").write_text("")
    (clone / "tests" / "test_calc.py").write_text(
        "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_zero(self):\n"
        "        self.assertEqual(add(0, 0), 0)\n")
    base = _committed(clone, "calc")
    line = {
        "instance_id": "me__calc-2", "repo": "me/calc", "base_commit": base, "problem_statement": "add subtracts",
        "patch": "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n",
        "test_patch": "--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -8 +8,3 @@\n"
                      "         self.assertEqual(add(0, 0), 0)\n+\n+    def test_two(self):\n"
                      "+        self.assertEqual(add(1, 1), 2)\n",
        "FAIL_TO_PASS": ["tests/test_calc.py::T::test_two"], "PASS_TO_PASS": ["tests/test_calc.py::T::test_zero"],
    }
    instance = read_instances(_write(tmp_path, [line]))[0][0][1]
    task = load_task(write_instance(instance, tmp_path / "repos", tmp_path / "out"))
    args = {spec.name.rsplit(":", 1)[1]: spec.args for spec in task.manifest.graders}
    assert args["tests_pass"]["command"] == "python -m pytest -q tests/test_calc.py"
    assert args["tests_pass"]["tests"] == ["tests/test_calc.py::T::test_zero"]
    assert args["holdout"]["command"] == "python -m pytest -q tests/test_calc.py::T::test_two"


def test_a_test_file_the_test_patch_deletes_is_left_out_of_the_fixture(tmp_path):
    # blinker 1.8.0's fix drops tests/test_saferef.py with the code it tested: the old file would
    # only fail on the solution, so the task's fixture leaves it out, as `tasks new` does.
    clone = tmp_path / "repos" / "me__calc"
    (clone / "tests").mkdir(parents=True)
    (clone / "calc.py").write_text("def add(a, b):\n    return a - b\n\n\ndef old():\n    return 1\n")
    (clone / "README.md").write_text("calc\n")
    (clone / "tests" / "test_calc.py").write_text("from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n")
    (clone / "tests" / "test_old.py").write_text("from calc import old\n\n\ndef test_old():\n    assert old() == 1\n")
    base = _committed(clone, "calc")
    line = {
        "instance_id": "me__calc-2", "repo": "me/calc", "base_commit": base, "problem_statement": "add subtracts",
        "patch": "--- a/calc.py\n+++ b/calc.py\n@@ -1,6 +1,2 @@\n def add(a, b):\n-    return a - b\n-\n-\n"
                 "-def old():\n-    return 1\n+    return a + b\n",
        "test_patch": "--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -4,2 +4,6 @@\n def test_zero():\n"
                      "     assert add(0, 0) == 0\n+\n+\n+def test_two():\n+    assert add(1, 1) == 2\n"
                      "--- a/tests/test_old.py\n+++ /dev/null\n@@ -1,5 +0,0 @@\n-from calc import old\n-\n-\n"
                      "-def test_old():\n-    assert old() == 1\n",
        "FAIL_TO_PASS": ["tests/test_calc.py::test_two"], "PASS_TO_PASS": ["tests/test_calc.py::test_zero"],
    }
    instance = read_instances(_write(tmp_path, [line]))[0][0][1]
    task = load_task(write_instance(instance, tmp_path / "repos", tmp_path / "out"))
    assert "tests/test_old.py" not in task.fixture() and "tests/test_calc.py" in task.fixture()
    assert sorted(task.holdout()) == ["tests/test_calc.py"]
    assert b"return a + b" in task.solution()["calc.py"].data


def test_min_tests_below_the_ids_listed_is_said_in_the_log_and_on_the_task(tmp_path, repos, monkeypatch):
    import endstate.authoring._swebench as swebench

    raw = shipped()[1]
    passing, failing = json.loads(raw["PASS_TO_PASS"]), json.loads(raw["FAIL_TO_PASS"])
    skipping = passing[:2]  # as two tests skip for an optional package the task's image lacks

    def collected(folder, holdout, command, backend, image, log):  # what the image's pytest reports (no sandbox)
        return failing + passing, {i for i in failing + passing if i not in skipping}, "", {}

    monkeypatch.setattr(swebench, "collected_ids", collected)
    said = []
    task = load_task(write_instance(_instance(tmp_path, **{k: raw[k] for k in raw}), repos, tmp_path / "out",
                                    said.append, backend="docker", image="unused"))
    args = {spec.name.rsplit(":", 1)[1]: spec.args for spec in task.manifest.graders}
    assert args["tests_pass"]["min_tests"] == len(passing) - 2
    note = (f"PASS_TO_PASS: min_tests is {len(passing) - 2} of its {len(passing)} tests: 2 skip on the solution in "
            f"the task's image ({skipping[0]}, {skipping[1]}): a package or resource they need is not there")
    assert note in said
    assert f"# {note}\n" in (task.root / "task.toml").read_text()


def test_fail_to_pass_tests_skipping_on_the_solution_are_the_ones_the_held_out_grader_lets_skip(tmp_path, repos,
                                                                                                  monkeypatch):
    """A held-out test reported skipped fails the task (code can raise a skip where it would fail), but for as many
    of FAIL_TO_PASS's as skip on the solution in the task's image, for want of a package: counted at import."""
    import endstate.authoring._swebench as swebench

    raw = shipped()[1]
    passing, failing = json.loads(raw["PASS_TO_PASS"]), json.loads(raw["FAIL_TO_PASS"])
    passing, failing = passing[1:], failing + passing[:1]  # (no sandbox runs here: the lists are only read)
    raw = {**raw, "PASS_TO_PASS": json.dumps(passing), "FAIL_TO_PASS": json.dumps(failing)}
    skipping = failing[:1]

    def collected(folder, holdout, command, backend, image, log):  # what the image's pytest reports (no sandbox)
        return failing + passing, {i for i in failing + passing if i not in skipping}, "", {}

    monkeypatch.setattr(swebench, "collected_ids", collected)
    task = load_task(write_instance(_instance(tmp_path, **{k: raw[k] for k in raw}), repos, tmp_path / "out",
                                    lambda line: None, backend="docker", image="unused"))
    args = {spec.name.rsplit(":", 1)[1]: spec.args for spec in task.manifest.graders}
    assert args["holdout"]["min_tests"] == len(failing) - 1 and args["holdout"]["may_skip"] == 1
    assert "may_skip" not in args["tests_pass"]  # the visible tests' skips hide no held-out result


@pytest.mark.docker
def test_a_test_file_that_cannot_be_imported_is_refused_naming_its_import_error(tmp_path, repos):
    from endstate.sandbox import DEFAULT_IMAGE

    # As requests 2317's test module under Python 3.11: a deprecation warning while importing, then an ImportError.
    raw = shipped()[1]
    added = ("diff --git a/tests/test_compat.py b/tests/test_compat.py\nnew file mode 100644\n--- /dev/null\n"
             "+++ b/tests/test_compat.py\n@@ -0,0 +1,8 @@\n+import warnings\n+\n"
             "+warnings.warn('cgi is deprecated', DeprecationWarning)\n+from collections import Mapping  # noqa: F401\n"
             "+\n+\n+def test_mapping():\n+    assert Mapping\n")
    failing = ["tests/test_compat.py::test_mapping", *json.loads(raw["FAIL_TO_PASS"])]
    instance = _instance(tmp_path, **{**raw, "test_patch": raw["test_patch"] + added,
                                      "FAIL_TO_PASS": json.dumps(failing)})
    with pytest.raises(UserError, match=r"field `FAIL_TO_PASS`: .* tests/test_compat.py::test_mapping \(no test of "
                                        r"tests/test_compat.py was collected \(ImportError: cannot import name "
                                        r"'Mapping' from 'collections'"):
        write_instance(instance, repos, tmp_path / "out", backend="docker", image=DEFAULT_IMAGE)


def test_a_log_fragment_in_pass_to_pass_is_left_out_and_said_on_the_task(tmp_path, repos):
    """pytest-dev__pytest-5227's PASS_TO_PASS holds `[100%]`, `[` and `[100%]` run into a rule: what SWE-bench's
    parser read as tests from lines of pytest's progress. Not bad input, and no test to run: left out, and the
    task says so."""
    raw = shipped()[1]
    passing = json.loads(raw["PASS_TO_PASS"])
    fragments = ["[100%]", "[", "[100%]" + "-" * 30]
    instances, bad = read_instances(_write(tmp_path, [dict(raw, PASS_TO_PASS=json.dumps([*passing, *fragments]))]))
    assert bad == [] and len(instances) == 1
    said: list[str] = []
    task = load_task(write_instance(instances[0][1], repos, tmp_path / "out", said.append))
    args = {spec.name.rsplit(":", 1)[1]: spec.args for spec in task.manifest.graders}
    assert args["tests_pass"] == {"command": "python -m pytest -q tests/test_iterutils.py", "tests": passing,
                                  "min_tests": len(passing)}
    note = (f"PASS_TO_PASS: [100%], [, [100%]{'-' * 30} left out, a fragment of a log line that SWE-bench's parser "
            "read as a test")
    assert note in (task.root / "task.toml").read_text() and any(line.startswith(note) for line in said)


def _pytest_record(tmp_path, repo: str) -> Instance:
    """A record of a tree laid out as pytest's own (src/_pytest), its fix in src/_pytest."""
    clone = tmp_path / "repos" / repo.replace("/", "__")
    (clone / "src" / "_pytest").mkdir(parents=True)
    (clone / "src" / "_pytest" / "__init__.py").write_text("X = 1\n")
    (clone / "testing").mkdir()
    (clone / "testing" / "test_x.py").write_text("def test_x():\n    pass\n")
    (clone / "README.rst").write_text("pytest\n")
    base = _committed(clone, "pytest")
    line = {"instance_id": "pytest-dev__pytest-1", "repo": repo, "base_commit": base,
            "problem_statement": "x", "patch": "--- a/src/_pytest/__init__.py\n+++ b/src/_pytest/__init__.py\n"
            "@@ -1 +1 @@\n-X = 1\n+X = 2\n", "test_patch": "--- a/testing/test_x.py\n+++ b/testing/test_x.py\n"
            "@@ -1,2 +1,2 @@\n def test_x():\n-    pass\n+    assert __import__('_pytest').X == 2\n",
            "FAIL_TO_PASS": ["testing/test_x.py::test_x"], "PASS_TO_PASS": []}
    return read_instances(_write(tmp_path, [line]))[0][0][1]


def test_pytest_s_own_records_run_the_graded_tree_s_pytest_and_say_what_it_goes_without(tmp_path):
    """SWE-bench installs pytest's tree in place and runs `pytest -rA` over the test patch's files: the task's
    graders name the tree-pytest runner (the tree's pytest, imported from src), with the ids to read passed
    and the guards that cannot be in it stated, and the task's header says why."""
    folder = write_instance(_pytest_record(tmp_path, "pytest-dev/pytest"), tmp_path / "repos", tmp_path / "out")
    task = load_task(folder)
    args = {spec.name.rsplit(":", 1)[1]: spec.args for spec in task.manifest.graders}
    assert args["holdout"] == {"command": "PYTHONPATH=src pytest -rA testing/test_x.py", "runner": "tree-pytest",
                               "tests": ["testing/test_x.py::test_x"], "min_tests": 1,
                               "unguarded": ["half_isolation", "tamper_guard", "twins", "value_twins"]}
    assert "printed by the graded tree's own pytest, which is the code under test" in (folder / "task.toml").read_text()
    assert "PYTHONPATH=src python3 -m pytest -rA testing/test_x.py" in (folder / "reference.toml").read_text()


def test_a_pytest_of_another_repository_s_tree_is_refused_in_one_line_naming_why(tmp_path):
    """Only pytest-dev/pytest's records run the tree's own pytest: another repository holding a `_pytest`
    package would be run by the image's pytest, and its fix would never run."""
    instance = _pytest_record(tmp_path, "someone/pytest-fork")
    with pytest.raises(UserError, match=r"^the project is pytest itself: its tests exercise the tree's own pytest"):
        write_instance(instance, tmp_path / "repos", tmp_path / "out")
    assert not (tmp_path / "out" / "pytest-dev__pytest-1").exists()


def test_instances_are_made_side_by_side_under_jobs_and_reported_in_the_files_order(tmp_path, repos, monkeypatch):
    """`-j 2` made one instance after the other (only the checks ran side by side): each waits here
    until the other is being made too, which never happens one at a time."""
    import threading

    from endstate.authoring import _swebench

    together = threading.Barrier(2, timeout=60)
    made = _swebench.write_instance

    def when_both_are_in_hand(instance, *args, **kwargs):
        together.wait()
        return made(instance, *args, **{**kwargs, "backend": None})  # no engine: the ids as given

    monkeypatch.setattr(_swebench, "write_instance", when_both_are_in_hand)
    said: list[str] = []
    report = _swebench.import_swebench(_write(tmp_path, shipped()[:2]), repos, tmp_path / "out", backend="docker",
                                       image="", jobs=2, log=said.append)
    assert list(report.made) == [shipped()[0]["instance_id"], shipped()[1]["instance_id"]], report
    assert list(report.seconds) == list(report.made) and not report.skipped
    assert any(line.startswith(f"[{shipped()[1]['instance_id']}] wrote ") for line in said), said


def _with_test_file(raw: dict, name: str, body: str) -> str:
    """`raw`'s test_patch, adding the test file `name` whose lines are `body`'s."""
    lines = body.splitlines()
    return raw["test_patch"] + (f"diff --git a/{name} b/{name}\nnew file mode 100644\n--- /dev/null\n+++ b/{name}\n"
                                f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{line}\n" for line in lines))


#: As requests' tests before 2.10 reach httpbin.org: the sandbox has no network, so no name resolves.
ONLINE = ("import urllib.request\n\nimport pytest\n\n\n@pytest.mark.parametrize('n', range(CASES))\n"
          "def test_offline(n):\n    assert n >= 0\n\n\n"
          "def test_get():\n    urllib.request.urlopen('http://httpbin.org/get', timeout=5)\n\n\n"
          "def test_post():\n    urllib.request.urlopen('http://httpbin.org/post', data=b'x', timeout=5)\n\n\n"
          "@pytest.mark.parametrize('n', range(11))\n"
          "def test_fetch(n):\n    urllib.request.urlopen('http://httpbin.org/get?n=%d' % n, timeout=5)\n\n\n"
          "def test_local():\n    assert 'sandbox' == 'network', 'the local check fails'\n\n\n"
          # As sphinx's test_latex_images: the failure is logged, and what is raised is an assertion on the page.
          "def test_page_images():\n    page = ''\n    try:\n"
          "        page = urllib.request.urlopen('http://httpbin.org/image/png', timeout=5).read()\n"
          "    except OSError as exc:\n"
          "        print('WARNING: Could not fetch remote image: http://httpbin.org/image/png [%s]' % exc)\n"
          "    assert 'png' in repr(page)\n")


def _online(tmp_path: Path, failing_added: list[str], passing_added: list[str], cases: int = 0) -> Instance:
    """The boltons instance with ONLINE's tests (`cases` cases that pass) added to its lists, as named."""
    raw = shipped()[1]
    failing = [*json.loads(raw["FAIL_TO_PASS"]), *(f"tests/test_online.py::{t}" for t in failing_added)]
    passing = [*json.loads(raw["PASS_TO_PASS"]), *(f"tests/test_online.py::{t}" for t in passing_added)]
    added = _with_test_file(raw, "tests/test_online.py", ONLINE.replace("CASES", str(cases)))
    return _instance(tmp_path, **{**raw, "test_patch": added, "FAIL_TO_PASS": json.dumps(failing),
                                  "PASS_TO_PASS": json.dumps(passing)})


#: As astropy's leap-second tables past their expiry: the first conversion of a process fails (a warning astropy gives
#: once, which the project's `filterwarnings = error` raises), whichever test makes it; the later ones pass.
ONCE = ("_converted = []\n\n\ndef _convert():\n    if not _converted:\n        _converted.append(1)\n"
        "        raise RuntimeError('leap-second file is expired')\n    return 1\n\n\n"
        "def test_first_conversion():\n    assert _convert() == 1\n\n\n"
        "def test_later_conversion():\n    assert _convert() == 1\n")


@pytest.mark.docker
def test_pass_to_pass_is_read_from_the_run_of_its_files_where_an_earlier_test_of_the_file_takes_a_once_per_process_fault(
        tmp_path, repos):
    """SWE-bench's run gives the fault to the file's first test, in neither list, and lists the later one as
    PASS_TO_PASS (astropy 13033's leap-second warning). Run by id, alone, the later test met the fault and the
    record was refused as one whose gold patch fails it; graded in the run of its file, it checks out."""
    from endstate.checks._check import check_task, grade_tree
    from endstate.run import resolve_graders
    from endstate.sandbox import DEFAULT_IMAGE

    raw = shipped()[1]
    passing = [*json.loads(raw["PASS_TO_PASS"]), "tests/test_once.py::test_later_conversion"]
    instance = _instance(tmp_path, **{**raw, "test_patch": _with_test_file(raw, "tests/test_once.py", ONCE),
                                      "PASS_TO_PASS": json.dumps(passing)})
    task = load_task(write_instance(instance, repos, tmp_path / "out", backend="docker", image=DEFAULT_IMAGE))
    args = {spec.name.rsplit(":", 1)[1]: spec.args for spec in task.manifest.graders}
    assert args["tests_pass"]["command"].endswith(" tests/test_iterutils.py tests/test_once.py"), args
    assert "tests/test_once.py::test_first_conversion" not in args["tests_pass"]["tests"]
    report = check_task(task, resolve_graders(task), "docker", DEFAULT_IMAGE)
    assert report.ok, report
    rows = {row.case: row for row in report.rows}
    assert rows["solution"].outcome == "pass" and "tests_pass" not in rows["fixture"].failing, report
    # A listed test that fails still fails the run, named; the unlisted one failing beside it does not.
    broken = dict(task.solution())
    source = broken["boltons/iterutils.py"]
    broken["boltons/iterutils.py"] = msgspec.structs.replace(source, data=source.data + b"\nfirst = len\n")
    verdicts = {name: (outcome, reason) for name, outcome, reason in grade_tree(
        task, resolve_graders(task), task.fixture(), broken, task.holdout(), "docker", DEFAULT_IMAGE)}
    outcome, reason = verdicts["tests_pass"]
    assert outcome == "fail" and "TestFirst::test_" in reason and "conversion" not in reason, reason


@pytest.mark.docker
@pytest.mark.parametrize("failing, passing, message", [
    (["test_get"], [], "test tests/test_online.py::test_get needs the network (httpbin.org), which the sandbox does "
                       "not have"),
    # more than `tasks new` ever deselects (two of 45 are few: `test_a_few_pass_to_pass_tests_...`)
    ([], [f"test_fetch[{n}]" for n in range(11)], "test tests/test_online.py::test_fetch[0] (and 10 more of "
                                                  "PASS_TO_PASS) needs the network (httpbin.org), which the sandbox "
                                                  "does not have"),
    ([], ["test_local"], "field `PASS_TO_PASS`: the gold patch fails tests/test_online.py::test_local in the task's "
                         "image: AssertionError: the local check fails"),
])
def test_a_test_the_gold_patch_fails_in_the_sandbox_is_refused_in_one_line_naming_it_and_why(
        tmp_path, repos, failing, passing, message):
    from endstate.sandbox import DEFAULT_IMAGE

    with pytest.raises(UserError) as raised:
        write_instance(_online(tmp_path, failing, passing), repos, tmp_path / "out", backend="docker",
                       image=DEFAULT_IMAGE)
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value), raised.value
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.docker
def test_a_few_pass_to_pass_tests_that_need_the_network_are_left_out_and_said_so(tmp_path, repos):
    from endstate.sandbox import DEFAULT_IMAGE

    said: list[str] = []
    cases = [f"test_offline[{n}]" for n in range(60)]
    task = load_task(write_instance(_online(tmp_path, [], [*cases, "test_get", "test_page_images"], cases=60), repos,
                                    tmp_path / "out", said.append, backend="docker", image=DEFAULT_IMAGE))
    # test_page_images raises an assertion; what it printed says why (sphinx 10435's test_latex_images)
    note = ("PASS_TO_PASS: 2 of its tests left out, which fail on the solution in the sandbox for want of the network "
            "(tests/test_online.py::test_get, tests/test_online.py::test_page_images): they reach httpbin.org, which "
            "the sandbox does not have")
    assert note in said and f"# {note}\n" in (task.root / "task.toml").read_text()
    args = {spec.name.rsplit(":", 1)[1]: spec.args for spec in task.manifest.graders}
    assert "tests/test_online.py" in args["tests_pass"]["command"]  # the file runs; those two are not graded
    assert not any(i.endswith(("::test_get", "::test_page_images")) for i in args["tests_pass"]["tests"])
    assert args["tests_pass"]["min_tests"] == len(json.loads(shipped()[1]["PASS_TO_PASS"])) + 60


def test_a_django_task_runs_its_tests_with_what_swebenchs_script_exports_and_its_image_has_the_locale(tmp_path):
    """Django 3.0's evaluation script exports LANG, LANGUAGE and LC_ALL (en_US.UTF-8) before runtests.py."""
    from endstate.authoring._fix import FixSplit
    from endstate.authoring._swebench import _task_toml
    from endstate.authoring._taskimage import write_task_image
    from endstate.sandbox import FileEntry

    raw = dict(shipped()[0], repo="django/django", version="3.0", PASS_TO_PASS=json.dumps(["test_a (a.tests.T)"]),
               FAIL_TO_PASS=json.dumps(["test_b (a.tests.T)"]))
    instance = read_instances(_write(tmp_path, [raw]))[0][0][1]
    entry = FileEntry(0o644, b"x = 1\n")
    split = FixSplit(base="b", head="b", subject="s", body="", fixture={"django/x.py": entry}, solution={},
                     solution_deletes=[], holdout={"tests/a/tests.py": entry}, parent_tests={},
                     fixed_paths=["django/x.py"])
    manifest, _ = _task_toml(instance, split, ["tests/**"], ["test_a (a.tests.T)"], ["test_b (a.tests.T)"], None,
                             "image/Dockerfile")
    commands = {spec.name.rsplit(":", 1)[1]: spec.args["command"] for spec in manifest.graders if "command" in spec.args}
    assert commands == {name: "LANG=en_US.UTF-8 LANGUAGE=en_US:en LC_ALL=en_US.UTF-8 ./tests/runtests.py --verbosity 2 "
                              "--settings=test_sqlite --parallel 1 a.tests" for name in ("tests_pass", "holdout")}
    write_task_image(tmp_path, "", None, ["git"], ["en_US.UTF-8"])
    dockerfile = (tmp_path / "image" / "Dockerfile").read_text()
    assert "RUN sed -i '/en_US.UTF-8/s/^# //g' /etc/locale.gen && locale-gen\n" in dockerfile
    assert (tmp_path / "image" / "system-packages.txt").read_text().split() == ["git", "locales"]


def test_a_declared_distribution_the_image_is_made_without_is_said_on_the_task(tmp_path):
    """Resolved from PyPI: Django's test requirements name pywatchman, of which PyPI holds no wheel. The image
    is made without it, and the task's header says so, not the import's log alone."""
    clone = tmp_path / "repos" / "me__calc"
    (clone / "tests").mkdir(parents=True)
    (clone / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (clone / "pyproject.toml").write_text('[project]\nname = "calc"\ndependencies = ["iniconfig", "pywatchman"]\n')
    (clone / "tests" / "test_calc.py").write_text("from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n")
    line = {
        "instance_id": "me__calc-3", "repo": "me/calc", "base_commit": _committed(clone, "calc"),
        "problem_statement": "add subtracts",
        "patch": "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n",
        "test_patch": "--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -4,2 +4,6 @@\n def test_zero():\n"
                      "     assert add(0, 0) == 0\n+\n+\n+def test_two():\n+    assert add(1, 1) == 2\n",
        "FAIL_TO_PASS": ["tests/test_calc.py::test_two"], "PASS_TO_PASS": ["tests/test_calc.py::test_zero"],
    }
    task = load_task(write_instance(read_instances(_write(tmp_path, [line]))[0][0][1], tmp_path / "repos",
                                    tmp_path / "out"))
    header = (task.root / "task.toml").read_text()
    assert "# Left out of the task's image: pywatchman, which the project declares but of which no wheel " in header
    pinned = (task.root / "image" / "requirements.txt").read_text()
    assert "pywatchman" not in pinned and "iniconfig==" in pinned, pinned


def test_a_clone_missing_a_file_of_the_base_commit_is_said_in_one_line(tmp_path):
    # A partial or damaged clone: the commit is there, one of its blobs is not.
    repo = tmp_path / "clone"
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "data").mkdir()
    (repo / "data" / "table.dat").write_text("lost\n")
    (repo / "kept.py").write_text("x = 1\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    blob = subprocess.run([*git, "rev-parse", "HEAD:data/table.dat"], capture_output=True, text=True,
                          check=True).stdout.strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    with pytest.raises(UserError, match=rf"^the clone {repo} lacks data/table.dat at base_commit {commit[:12]} "
                                        rf"\(object {blob[:12]}\), as a partial or damaged clone does: fetch"):
        base_tree(repo, commit)


def test_a_distribution_the_fix_declares_is_in_the_task_image(tmp_path):
    """pylint 4661: the fix adds `appdirs` to setup.cfg and the held-out test imports it. SWE-bench's
    environment had it (its record passes there); the task's image has it too, though the base does not ask."""
    clone = tmp_path / "repos" / "me__calc"
    (clone / "tests").mkdir(parents=True)
    (clone / "calc.py").write_text("def home():\n    return '~'\n")
    (clone / "setup.cfg").write_text("[metadata]\nname = calc\n\n[options]\ninstall_requires =\n    six\n")
    (clone / "tests" / "test_calc.py").write_text("from calc import home\n\n\ndef test_home():\n    assert home()\n")
    (clone / "README").write_text("calc\n")
    line = {
        "instance_id": "me__calc-4", "repo": "me/calc", "base_commit": _committed(clone, "calc"),
        "problem_statement": "home is not a cache dir",
        "patch": "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,5 @@\n-def home():\n-    return '~'\n+import iniconfig\n+\n+\n"
                 "+def home():\n+    return iniconfig.__name__\n"
                 "--- a/setup.cfg\n+++ b/setup.cfg\n@@ -4,3 +4,4 @@\n [options]\n install_requires =\n     six\n"
                 "+    iniconfig>=1.0\n",
        "test_patch": "--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -4,2 +4,6 @@\n def test_home():\n"
                      "     assert home()\n+\n+\n+def test_named():\n+    assert home() == 'iniconfig'\n",
        "FAIL_TO_PASS": ["tests/test_calc.py::test_named"], "PASS_TO_PASS": ["tests/test_calc.py::test_home"],
    }
    said: list[str] = []
    task = load_task(write_instance(read_instances(_write(tmp_path, [line]))[0][0][1], tmp_path / "repos",
                                    tmp_path / "out", log=said.append))
    pinned = (task.root / "image" / "requirements.txt").read_text()
    assert "iniconfig==" in pinned and "six==" in pinned, pinned
    assert "the fix declares iniconfig>=1.0, which the project at base_commit does not: the task's image has it too, " \
           "as SWE-bench's environment had" in said
    assert "import iniconfig" not in task.fixture()["calc.py"].data.decode()


def test_the_requirements_files_are_read_at_the_environment_setup_commit_as_swebench_reads_them(tmp_path):
    """SWE-bench installs a version's requirements files as its environment_setup_commit has them (Django's
    tests/requirements/py3.txt, Flask's requirements/dev.txt), whatever the record's base_commit holds."""
    clone = tmp_path / "flask"
    (clone / "requirements").mkdir(parents=True)
    (clone / "requirements" / "dev.txt").write_text("-r tests.txt\nsix\n")
    (clone / "requirements" / "tests.txt").write_text("pytest\n")
    base = _committed(clone, "base")
    git = ["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t"]
    (clone / "requirements" / "dev.txt").write_text("-r tests.txt\nsix\nattrs\n")
    (clone / "requirements" / "tests.txt").write_text("pytest\niniconfig\n")
    subprocess.run([*git, "commit", "-qam", "later"], check=True)
    later = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    declared = base_tree(clone, base)
    record = Instance(instance_id="pallets__flask-1", repo="pallets/flask", base_commit=base, patch="", test_patch="",
                      problem_statement="", FAIL_TO_PASS=[], PASS_TO_PASS=[], version="2.3",
                      environment_setup_commit=later)
    said: list[str] = []
    asks = _at_setup_commit(record, clone, declared, swebench_env("pallets/flask", "2.3"), said.append)
    assert asks["requirements/dev.txt"].data == b"-r tests.txt\nsix\nattrs\n"
    assert asks["requirements/tests.txt"].data == b"pytest\niniconfig\n"
    assert declared["requirements/tests.txt"].data == b"pytest\n"  # the fixture's own files are the base's
    assert said == [f"requirements read at environment_setup_commit {later[:12]}, as SWE-bench's environment reads "
                    "them: requirements/dev.txt, requirements/tests.txt differ from base_commit's"]
    gone = msgspec.structs.replace(record, environment_setup_commit="f" * 40)
    said.clear()
    assert _at_setup_commit(gone, clone, declared, swebench_env("pallets/flask", "2.3"), said.append) == declared
    assert said == [f"environment_setup_commit ffffffffffff is not in {clone}: the requirements files are read at "
                    "base_commit (fetch it into the clone to read them as SWE-bench does)"]


def test_a_few_image_comparisons_another_freetype_fails_are_left_out_of_pass_to_pass_and_said():
    """matplotlib's baselines draw text with the FreeType 2.6.1 its build downloads; the task image's build has
    no network and links Debian's (matplotlib 24970's stand-in: the gold patch failed two colorbar images)."""
    compared = "matplotlib.testing.exceptions.ImageComparisonFailure: images not close (RMS 2.231): result.png"
    ids = [f"lib/matplotlib/tests/test_colors.py::test_{n}" for n in ("a", "b", "c")]
    failed = {ids[1]: compared}
    assert _passing_on_the_fix("PASS_TO_PASS", ids, failed, 250, fonts=_MATPLOTLIB_FONTS) == \
        ([ids[0], ids[2]], [], [ids[1]])
    with pytest.raises(UserError, match=r"the gold patch fails .*test_b in the task's image: .*ImageComparisonFailure: images not close"):
        _passing_on_the_fix("PASS_TO_PASS", ids, failed, 250)  # no FreeType of another build: not excused
    with pytest.raises(UserError, match=r"^field `FAIL_TO_PASS`: the gold patch fails .*test_b in the task's image, "
                                        r"an image comparison: matplotlib's baseline images draw their text"):
        _passing_on_the_fix("FAIL_TO_PASS", ids, failed, 250, fonts=_MATPLOTLIB_FONTS)
    with pytest.raises(UserError, match=r"\(and 9 more\) in the task's image, an image comparison"):
        many = {f"t::{n}": compared for n in range(10)}
        _passing_on_the_fix("PASS_TO_PASS", list(many), many, 250, fonts=_MATPLOTLIB_FONTS)
    other = {ids[1]: "AssertionError: assert 1 == 2"}
    with pytest.raises(UserError, match="assert 1 == 2"):
        _passing_on_the_fix("PASS_TO_PASS", ids, other, 250, fonts=_MATPLOTLIB_FONTS)
    # matplotlib 20859 (3.4): 16 of its 88 PASS_TO_PASS are legend images with text: more than ten, under a quarter
    listed = [f"lib/matplotlib/tests/test_legend.py::test_{n}" for n in range(88)]
    drawn = {i: compared for i in listed[:16]}
    assert _passing_on_the_fix("PASS_TO_PASS", listed, drawn, 300, fonts=_MATPLOTLIB_FONTS) == \
        (listed[16:], [], listed[:16])
    with pytest.raises(UserError, match=r"\(and 21 more\) in the task's image, an image comparison"):
        _passing_on_the_fix("PASS_TO_PASS", listed, {i: compared for i in listed[:22]}, 300, fonts=_MATPLOTLIB_FONTS)


def test_pass_to_pass_tests_that_need_the_network_are_few_under_half_of_the_list_and_ten_at_most():
    """sphinx 8269: PASS_TO_PASS is twelve tests of one file, three of which reach www.google.com. One per fifty
    run would keep none; fewer than half of the list, and ten at most, are left out."""
    unreachable = ("requests.exceptions.ConnectionError: HTTPSConnectionPool(host='www.google.com', port=443): Max "
                   "retries exceeded with url: / (Caused by NewConnectionError('...: [Errno -3] Temporary failure in "
                   "name resolution'))")
    ids = [f"tests/test_build_linkcheck.py::test_{n}" for n in range(12)]
    failed = {i: unreachable for i in ids[:3]}
    assert _passing_on_the_fix("PASS_TO_PASS", ids, failed, 12) == (ids[3:], ids[:3], [])
    with pytest.raises(UserError, match=r"test_0 \(and 5 more of PASS_TO_PASS\) needs the network \(www.google.com\)"):
        _passing_on_the_fix("PASS_TO_PASS", ids, {i: unreachable for i in ids[:6]}, 12)  # half of them
    many = [f"t.py::test_{n}" for n in range(100)]
    with pytest.raises(UserError, match=r"\(and 10 more of PASS_TO_PASS\)"):
        _passing_on_the_fix("PASS_TO_PASS", many, {i: unreachable for i in many[:11]}, 100)
    # one per fifty tests run, as before, whatever the list's length
    assert _passing_on_the_fix("PASS_TO_PASS", ids[:2], {ids[0]: unreachable}, 100) == ([ids[1]], [ids[0]], [])
    with pytest.raises(UserError, match=r"^test .*test_0 needs the network"):
        _passing_on_the_fix("FAIL_TO_PASS", ids, {ids[0]: unreachable}, 12)


def test_a_folder_another_import_made_meanwhile_is_one_line_and_left_alone(tmp_path, repos, monkeypatch):
    """Two imports into one --out: the second to make an instance's folder raised FileExistsError (a traceback),
    and a failing import then removed the other's folder under its image build."""
    import endstate.authoring._swebench as swebench

    raw = shipped()[1]
    instance = read_instances(_write(tmp_path, [raw]))[0][0][1]
    out = tmp_path / "out"
    made = swebench._task_toml

    def meanwhile(*args, **kwargs):
        (out / instance.instance_id).mkdir(parents=True, exist_ok=True)
        (out / instance.instance_id / "theirs").write_text("x")
        return made(*args, **kwargs)

    monkeypatch.setattr(swebench, "_task_toml", meanwhile)
    with pytest.raises(UserError, match=r"was made meanwhile, by another import into .*: give each import its own --out"):
        write_instance(instance, repos, out)
    assert (out / instance.instance_id / "theirs").read_text() == "x"
