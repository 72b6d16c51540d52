"""How a project's tests run, read from its layout and configuration (no sandbox needed)."""

from __future__ import annotations

import pytest

from endstate.authoring._fix import readers_of
from endstate.authoring._testcommand import (
    plugin_distributions,
    project_test_command,
    read_project_tests,
    suite_paths,
    unknown_option_error,
)
from endstate.errors import UserError
from endstate.grading import parse_test_command
from endstate.grading._testrun import TestCommandError, import_paths
from endstate.sandbox._tree import FileEntry, Tree


def tree(**files: str) -> Tree:
    return {path.replace("__", "/").replace("/init/", "/__init__"): FileEntry(0o644, text.encode())
            for path, text in files.items()}


def files(mapping: dict[str, str]) -> Tree:
    return {path: FileEntry(0o644, text.encode()) for path, text in mapping.items()}


PYTEST_TEST = "import pytest\n\ndef test_x():\n    assert True\n"
UNITTEST_TEST = "import unittest\n\nclass T(unittest.TestCase):\n    def test_x(self):\n        pass\n"


def test_a_flat_project_runs_plain_pytest():
    project = files({"pkg/__init__.py": "", "tests/test_a.py": PYTEST_TEST})
    assert project_test_command(project, ["tests"]) == "python -m pytest -q tests"


def test_a_src_layout_puts_src_on_the_import_path():
    project = files({"src/pkg/__init__.py": "", "tests/test_a.py": PYTEST_TEST, "pyproject.toml": "[project]\n"})
    command = project_test_command(project, ["tests/test_a.py::test_x"])
    assert command == "PYTHONPATH=src python -m pytest -q tests/test_a.py::test_x"
    runner, args, env = parse_test_command(command)
    assert (runner, args) == ("pytest", ["-q", "tests/test_a.py::test_x"])
    assert import_paths(env) == (["src"], [])


@pytest.mark.parametrize("name, text", [
    ("setup.cfg", "[options]\npackage_dir =\n    =src\npackages = find:\n"),
    ("setup.py", "from setuptools import setup\nsetup(package_dir={'': 'src'})\n"),
    ("pyproject.toml", '[tool.setuptools.packages.find]\nwhere = ["src"]\n'),
    ("pyproject.toml", '[tool.hatch.build.targets.wheel]\npackages = ["src/pkg"]\n'),
])
def test_a_src_layout_its_configuration_declares_is_seen_beside_a_top_level_package(name, text):
    project = files({"src/pkg/__init__.py": "", "bench/__init__.py": "", "tests/test_a.py": PYTEST_TEST, name: text})
    assert project_test_command(project, ["tests"]) == "PYTHONPATH=src python -m pytest -q tests"
    # Undeclared, the package at the top wins: it may be the project's own.
    assert project_test_command({**project, name: FileEntry(0o644, b"")}, ["tests"]) == "python -m pytest -q tests"


def test_a_src_package_of_the_projects_name_is_seen_beside_another_top_level_package():
    # pydicom: src/pydicom, built by flit (which finds src/ by itself), and a benchmarks/ package at the top.
    project = files({"src/pydicom/__init__.py": "", "benchmarks/__init__.py": "", "tests/test_a.py": PYTEST_TEST,
                     "pyproject.toml": '[build-system]\nbuild-backend = "flit_core.buildapi"\n'
                                       '[project]\nname = "pydicom"\n'})
    assert project_test_command(project, ["tests"]) == "PYTHONPATH=src python -m pytest -q tests"
    named_top = {**project, "pyproject.toml": FileEntry(0o644, b'[project]\nname = "benchmarks"\n')}
    assert project_test_command(named_top, ["tests"]) == "python -m pytest -q tests"


def test_pythonpath_the_configuration_declares_is_left_to_pytest():
    project = files({"src/pkg/__init__.py": "", "tests/test_a.py": PYTEST_TEST,
                     "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n'})
    assert project_test_command(project, ["tests"]) == "python -m pytest -q tests"
    assert read_project_tests(project).config == "pyproject.toml"


@pytest.mark.parametrize("name, text", [
    ("pytest.ini", "[pytest]\naddopts = --cov=pkg -q\n"),
    ("pyproject.toml", '[tool.pytest.ini_options]\naddopts = ["--cov", "pkg"]\n'),
    ("tox.ini", "[tox]\nenvlist = py\n\n[pytest]\naddopts = --cov-report term\n"),
    ("setup.cfg", "[metadata]\nname = pkg\n\n[tool:pytest]\naddopts = --cov pkg\n"),
])
def test_a_plugin_named_in_addopts_must_be_installed(name, text):
    project = files({"pkg/__init__.py": "", "tests/test_a.py": PYTEST_TEST, name: text})
    with pytest.raises(UserError) as caught:
        project_test_command(project, ["tests"])
    said = str(caught.value)
    assert "pytest-cov" in said and name in said and "--test-command" in said and "test dependencies" in said
    # Installed (a declared test dependency): the harness loads it as pytest would, unnamed.
    assert project_test_command(project, ["tests"], installed=["pytest_cov"]) == "python -m pytest -q tests"


def test_pytests_own_options_need_nothing():
    project = files({"pkg/__init__.py": "", "tests/test_a.py": PYTEST_TEST,
                     "setup.cfg": "[tool:pytest]\naddopts = --doctest-modules -ra --strict-markers\n"})
    assert project_test_command(project, ["tests"]) == "python -m pytest -q tests"


def test_a_unittest_only_project_runs_unittest():
    project = files({"pkg/__init__.py": "", "tests/__init__.py": "", "tests/test_a.py": UNITTEST_TEST})
    assert project_test_command(project, ["tests"]) == "python -m unittest discover -s tests -t ."
    assert project_test_command(project, ["tests/test_a.py::T::test_x", "tests/test_b.py"]) == \
        "python -m unittest tests.test_a.T.test_x tests.test_b"
    # A test folder that is no package: its modules are top-level names, the folder on the import path.
    loose = files({"src/pkg/__init__.py": "", "tests/test_a.py": UNITTEST_TEST})
    assert project_test_command(loose, ["tests/test_a.py::T::test_x"]) == \
        "PYTHONPATH=src:tests python -m unittest test_a.T.test_x"
    # A conftest.py, or a test that mentions pytest, keeps pytest.
    assert read_project_tests({**project, "tests/conftest.py": FileEntry(0o644, b"")}).runner == "pytest"


def test_the_authors_command_wins():
    project = files({"pkg/__init__.py": "", "tests/test_a.py": PYTEST_TEST, "pytest.ini": "[pytest]\naddopts = --cov\n"})
    assert project_test_command(project, ["tests"], override="python -m pytest -o addopts=") == \
        "python -m pytest -o addopts= tests"


def test_an_unknown_option_is_named_with_its_plugin():
    error = unknown_option_error("python -m pytest -q tests", "ERROR: usage: ... | error: unrecognized arguments: "
                                 "--timeout=5")
    assert error is not None and "--timeout=5" in str(error) and "pytest-timeout" in str(error)
    assert unknown_option_error("python -m pytest", "1 failed") is None


def test_import_folders_stay_inside_the_project():
    assert import_paths(["PYTHONPATH=src:lib/", "FOO=1"]) == (["src", "lib"], ["FOO=1"])
    for bad in ("PYTHONPATH=/usr/lib", "PYTHONPATH=src:../x"):
        with pytest.raises(TestCommandError):
            import_paths([bad])


def test_data_files_are_read_by_the_modules_that_name_their_folder():
    project = files({
        "tests/test_data.py": 'DATA = Path(__file__).parent / "data"\nVALID = DATA / "valid"\n',
        "tests/test_other.py": "def test_y():\n    pass\n",
        "tests/data/valid/new-case.toml": "a = 1\n",
    })
    held = {p: e for p, e in project.items() if p.endswith(".toml")}
    assert readers_of(held, project, ("tests/**",)) == ["tests/test_data.py"]
    assert readers_of({"tests/data/x/y.bin": FileEntry(0o644, b"")}, project, ("tests/**",)) == ["tests/test_data.py"]


def test_unittest_modules_named_the_other_way_round_are_discovered_by_their_pattern():
    project = files({"pkg/__init__.py": "", "pkg/tests/__init__.py": "", "pkg/tests/ansi_test.py": UNITTEST_TEST})
    assert project_test_command(project, ["pkg"]) == "python -m unittest discover -s pkg -t . -p '*_test.py'"


def test_a_unittest_only_project_named_by_pytest_node_ids_runs_pytest():
    # more-itertools writes its tests for unittest; a SWE-bench instance names them as pytest does.
    project = files({"pkg/__init__.py": "", "tests/__init__.py": "", "tests/test_a.py": UNITTEST_TEST})
    assert project_test_command(project, ["tests/test_a.py::T::test_x"], pytest_ids=True) == \
        "python -m pytest -q tests/test_a.py::T::test_x"


def test_the_suite_is_what_the_projects_testpaths_name_where_the_tree_holds_them():
    # attrs: testpaths = "tests" leaves out bench/test_benchmarks.py, whose marker needs pytest-codspeed.
    tree = {path: FileEntry(0o644, data) for path, data in {
        "pyproject.toml": b'[tool.pytest.ini_options]\ntestpaths = "tests"\n', "tests/test_a.py": b"",
        "bench/test_b.py": b""}.items()}
    assert suite_paths(tree, ["bench", "tests"]) == ["tests"]
    tree["pyproject.toml"] = FileEntry(0o644, b'[tool.pytest.ini_options]\ntestpaths = ["nowhere", "t*"]\n')
    assert suite_paths(tree, ["bench", "tests"]) == ["bench", "tests"]  # none held, or a glob: every root
    del tree["pyproject.toml"]
    assert suite_paths(tree, ["bench", "tests"]) == ["bench", "tests"]


def test_swebench_commands_of_djangos_and_sympys_runners():
    from endstate.authoring._testcommand import runner_args, runner_command

    assert runner_command("django", ["tests/model_forms/test_modelchoicefield.py", "tests/a/data.txt"], []) == (
        "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 model_forms.test_modelchoicefield")
    # no Python file in the test patch (django__django-10097): the modules the ids name
    assert runner_command("django", ["tests/validators/valid_urls.txt"], [
        "test_ascii_validator (auth_tests.test_validators.UsernameValidatorsTests)",
        "test_defaults (str.tests.SimpleTests.test_defaults)"]).endswith("--parallel 1 auth_tests.test_validators str.tests")
    assert runner_command("django", ["tests/x/tests.py"], [], "1.9").endswith("test_sqlite x.tests")
    assert runner_command("sympy", ["sympy/core/tests/test_basic.py", "sympy/core/tests/test_numbers.py"], []) == (
        "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose "
        "sympy/core/tests/test_basic.py sympy/core/tests/test_numbers.py")
    assert runner_command("sympy", ["sympy/a/tests/test_b.py"], [], by_hand=True).startswith(
        "PYTHONPATH=. PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' python3 bin/test -C")
    args = runner_args("sympy", ["sympy/a/tests/test_b.py"], ["test_b", "test_c"])
    assert args["tests"] == ["test_b", "test_c"] and args["min_tests"] == 2 and args["runner"] == "sympy"
    assert args["unguarded"] == ["half_isolation", "tamper_guard", "twins", "value_twins"]


def test_swebench_command_of_pytest_s_own_tree():
    """SWE-bench's `pytest -rA` over the test patch's Python files, run by the tree's pytest from its src (as its
    editable install finds it); typed by hand, `python3 -m pytest` (the sandbox has no other pytest)."""
    from endstate.authoring._testcommand import runner_args, runner_command, runner_ids

    files = ["testing/test_skipping.py", "testing/example_scripts/x.txt", "testing/conftest.py"]
    assert runner_command("tree-pytest", files, []) == "PYTHONPATH=src pytest -rA testing/test_skipping.py " \
        "testing/conftest.py"
    assert runner_command("tree-pytest", files[:1], [], by_hand=True) == (
        "PYTHONPATH=src python3 -m pytest -rA testing/test_skipping.py")
    args = runner_args("tree-pytest", files[:1], ["testing/test_skipping.py::test_a[x"])
    assert args["runner"] == "tree-pytest" and args["tests"] == ["testing/test_skipping.py::test_a[x"]
    assert args["unguarded"] == ["half_isolation", "tamper_guard", "twins", "value_twins"]
    assert runner_ids("tree-pytest", ["test_x"]) == "holds 'test_x', which is not a pytest node id " \
        "(path/to/test_x.py::name)"


def test_a_plugin_pytest_or_the_project_itself_provides_needs_nothing():
    # pytest's own addopts load its built-in pytester; scikit-learn's load a module of its own.
    pytests = files({"src/_pytest/__init__.py": "", "testing/test_a.py": PYTEST_TEST,
                     "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-rfEX -p pytester --strict-markers"\n'})
    sklearn = files({"sklearn/__init__.py": "", "sklearn/tests/__init__.py": "", "sklearn/tests/random_seed.py": "",
                     "sklearn/tests/test_a.py": PYTEST_TEST,
                     "setup.cfg": "[tool:pytest]\naddopts = --doctest-modules -p sklearn.tests.random_seed\n"})
    for project, tests in ((pytests, "testing"), (sklearn, "sklearn")):
        assert plugin_distributions(project) == []
        assert project_test_command(project, [tests], installed=[]).endswith(f"pytest -q {tests}")
    # A module neither holds is still a plugin to install.
    other = {**sklearn, "setup.cfg": FileEntry(0o644, b"[tool:pytest]\naddopts = -p xdist.looponfail\n")}
    assert plugin_distributions(other) == ["xdist"]
