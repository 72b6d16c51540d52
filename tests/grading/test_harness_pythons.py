"""The harness's in-container pieces run on every Python a task image may carry (3.6 to 3.13).

A task imported from SWE-bench runs on the Python its specification names, and in its image that
Python is `python3`: the graded run's entry point, the guard, the warm runner and the sandbox's
own scripts all run on it. So none of them may use what 3.6 lacks: `from __future__ import
annotations`, `:=`, an evaluated `list[str]` annotation, `socket.send_fds` (3.9), ...
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PIECES = sorted([*(ROOT / "endstate" / "grading" / "harness").glob("*.py"),
                 *(ROOT / "endstate" / "sandbox" / "scripts").glob("*.py"),
                 ROOT / "endstate" / "sandbox" / "_shim_server.py", ROOT / "endstate" / "agents" / "_forwarder.py"])
#: Names newer than Python 3.6 that a piece might reach for (the version that brought each).
NEWER = {"send_fds": "3.9", "recv_fds": "3.9", "waitstatus_to_exitcode": "3.9", "removeprefix": "3.9",
         "removesuffix": "3.9", "pidfd_open": "3.9", "memfd_create": "3.8",
         "cached_property": "3.8", "nullcontext": "3.7", "time_ns": "3.7", "monotonic_ns": "3.7",
         "register_at_fork": "3.7", "fromisoformat": "3.7", "isascii": "3.7", "freeze": "3.7"}

#: Modules newer than Python 3.6: imported only where an ImportError is caught (with a fallback).
NEWER_MODULES = {"importlib.metadata", "importlib.resources", "dataclasses", "contextvars", "zoneinfo", "graphlib",
                 "tomllib"}


def _evaluated_annotations(tree: ast.Module) -> list[ast.expr]:
    """The annotations Python evaluates when the module runs: a module's variables', and every
    function's arguments and return (a local variable's annotation is never evaluated)."""
    found = [node.annotation for node in tree.body if isinstance(node, ast.AnnAssign)]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs, node.args.vararg,
                         node.args.kwarg]
            found += [a.annotation for a in arguments if a is not None and a.annotation is not None]
            found += [node.returns] if node.returns is not None else []
    return found


@pytest.mark.parametrize("piece", PIECES, ids=[p.name for p in PIECES])
def test_a_piece_uses_nothing_python_3_6_lacks(piece):
    tree = ast.parse(piece.read_text(encoding="utf-8"))
    futures = [a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "__future__"
               for a in n.names]
    assert "annotations" not in futures, f"{piece.name}: `from __future__ import annotations` is 3.7's"
    assert not any(isinstance(n, ast.NamedExpr) for n in ast.walk(tree)), f"{piece.name}: `:=` is 3.8's"
    for annotation in _evaluated_annotations(tree):
        evaluated = not (isinstance(annotation, ast.Constant) and isinstance(annotation.value, str))
        assert not (evaluated and any(isinstance(n, (ast.Subscript, ast.BinOp)) for n in ast.walk(annotation))), \
            f"{piece.name}:{annotation.lineno}: `{ast.unparse(annotation)}` is evaluated: quote it"
    newer = sorted({n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in NEWER})
    assert not newer, f"{piece.name} calls {', '.join(f'{n} ({NEWER[n]})' for n in newer)}"
    guarded = {id(n) for t in ast.walk(tree) if isinstance(t, ast.Try) for s in t.body for n in ast.walk(s)}
    modules = [(n.lineno, name) for n in ast.walk(tree) if id(n) not in guarded
               for name in ([a.name for a in n.names] if isinstance(n, ast.Import) else
                            [f"{n.module}.{a.name}" for a in n.names] if isinstance(n, ast.ImportFrom) else [])]
    assert not [m for m in modules if m[1].split(".")[0] in NEWER_MODULES or m[1] in NEWER_MODULES], \
        f"{piece.name} imports a module newer than 3.6 outside a try: {modules}"


def _interpreters() -> list[Path]:
    """The host's pyenv interpreters of 3.6 and 3.8 (the oldest SWE-bench names, and the last before 3.9)."""
    versions = Path.home() / ".pyenv" / "versions"
    found = [max(versions.glob(f"{minor}.*"), default=None) for minor in ("3.6", "3.8")]
    return [v / "bin" / "python" for v in found if v is not None and (v / "bin" / "python").is_file()]


_COMPILE_AND_IMPORT = """
import py_compile, sys, tempfile
for path in sys.argv[1:]:
    py_compile.compile(path, cfile=tempfile.mktemp(suffix=".pyc"), doraise=True)
sys.path.insert(0, sys.argv[1].rsplit("/", 1)[0])
import endstate_guard, endstate_runner, endstate_connect
print("%d.%d" % sys.version_info[:2])
"""


@pytest.mark.parametrize("python", _interpreters(), ids=lambda p: p.parent.parent.name)
def test_the_harness_compiles_and_imports_on_an_old_python(python):
    """Run where the host has pyenv's 3.6 or 3.8 (this machine kind carries CPython 3.6 to 3.13)."""
    harness = sorted(str(p) for p in PIECES if p.parent.name == "harness")
    others = [str(p) for p in PIECES if p.parent.name != "harness"]
    done = subprocess.run([str(python), "-I", "-c", _COMPILE_AND_IMPORT, *harness, *others],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"3\.[68]\n", done.stdout), done.stdout


def _graded(image, fixture, held, graders, tree):
    """{grader: verdict} of `tree` graded in `image` against `fixture`, with `held` staged."""
    from endstate.grading import grade, prepare_grading_sandbox, seal_overlay, stage_holdout
    from endstate.guards import Guards
    from endstate.sandbox import SandboxLimits

    with prepare_grading_sandbox("docker", image, SandboxLimits(command_timeout_s=120), "test") as box:
        sealed = seal_overlay(tree, fixture, box, Guards())
        stage_holdout(sealed, held)
        return dict(grade(sealed, graders, Guards()))


@pytest.mark.docker
@pytest.mark.slow
def test_the_oldest_python_a_source_here_serves_grades_as_the_sandboxs_does(tmp_path):
    """A graded run, for real, on the oldest Python SWE-bench names that a source here serves: 3.6 where
    the host has pyenv's (this machine kind), else the nearest newer, Debian bullseye's 3.9 (CI). A
    right end state passes, a wrong one fails, and one that rewrites pytest's reports is caught."""
    from endstate.authoring._taskimage import write_task_image
    from endstate.grading import Outcome
    from endstate.sandbox import build_task_image, python_source, resolve_requirements
    from tests.grading.test_grading_sandbox import (
        BUGGY,
        FIXED,
        FIXTURE,
        HOLD,
        HOLDOUT_PASS,
        REPORT_PATCH,
        TESTS_PASS,
        files,
    )

    source = python_source("3.6")
    write_task_image(tmp_path, resolve_requirements(["pytest"], target=source))
    image = build_task_image(tmp_path / "image" / "Dockerfile", f"harness-python-{source.python}")

    def verdicts(tree):
        return _graded(image, FIXTURE, HOLD, [TESTS_PASS, HOLDOUT_PASS], tree)

    right = verdicts(dict(FIXTURE, **files({"calc/ops.py": FIXED})))
    assert all(v.outcome is Outcome.PASS for v in right.values()), right
    assert right["tests_pass"].reason == "tests: 2 passed"
    wrong = verdicts(dict(FIXTURE))
    assert wrong["holdout"].outcome is Outcome.FAIL and "test_seven" in wrong["holdout"].reason, wrong
    forged = verdicts(dict(FIXTURE, **files({"calc/ops.py": BUGGY + REPORT_PATCH})))
    assert forged["end_state"].outcome is Outcome.FAIL and "_pytest" in forged["end_state"].reason, forged
    assert forged["tests_pass"].outcome is Outcome.FAIL and forged["holdout"].outcome is Outcome.FAIL, forged


#: A plugin of the image whose module imports the project under test (SWE-bench's astropy 1.3 environment
#: pins pytest-astropy-header 0.1, which imports astropy), as a distribution of its own with its entry point.
HEADER_PLUGIN = {
    "calcheader.py": "import calc.ops\n\n\ndef pytest_report_header(config):\n    return 'calc ' + calc.ops.__name__\n",
    "calcheader-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: calcheader\nVersion: 1.0\n",
    "calcheader-1.0.dist-info/entry_points.txt": "[pytest11]\ncalcheader = calcheader\n",
    "calcheader-1.0.dist-info/RECORD": "",
}
SEES_HEADER = (b"def test_header(pytestconfig):\n"
               b"    assert pytestconfig.pluginmanager.get_plugin('calcheader') is not None\n"
               b"    assert 'calcheader' in {d.project_name for _, d in pytestconfig.pluginmanager.list_plugin_distinfo()}\n")


@pytest.mark.docker
@pytest.mark.slow
def test_pytest_3_loads_an_image_plugin_that_imports_the_project_once_the_workspace_is_on_sys_path(tmp_path):
    """SWE-bench's astropy 1.3 environment: Python 3.6, pytest 3.3.1 and pluggy 0.6 (which keeps each plugin's
    distribution as pkg_resources', read by `project_name`), and an image plugin importing the project. The
    harness imports the image's plugins before the workspace joins sys.path: that one failed to import, and every
    astropy 1.3 record was refused at collection. Now it is loaded once the workspace is there; a project the end
    state broke fails the run."""
    from calc_project import FIXED, calc_graders, calc_trees, files

    from endstate.authoring._taskimage import write_task_image
    from endstate.grading import Outcome
    from endstate.sandbox import build_task_image, python_source, resolve_requirements
    from tests.grading.test_image_plugins import (
        PLANTED,  # a distribution the agent could leave, its plugin failing every test
    )

    source = python_source("3.6")
    # As SWE-bench pins them (attrs: 3.3.1 uses `convert`; setuptools: pkg_resources vendors six, which installs an
    # import hook when pytest loads the plugins through it).
    pins = ["pytest==3.3.1", "pluggy<0.7", "attrs==17.3.0", "setuptools==38.2.4", "importlib-metadata"]
    write_task_image(tmp_path, resolve_requirements(pins, target=source))
    for path, text in HEADER_PLUGIN.items():
        (tmp_path / "image" / "plugin" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "image" / "plugin" / path).write_text(text)
    with (tmp_path / "image" / "Dockerfile").open("a") as dockerfile:
        dockerfile.write("COPY plugin/ /tmp/endstate-plugin/\nRUN cp -r /tmp/endstate-plugin/. "
                         "\"$(python3 -c 'import sysconfig; print(sysconfig.get_path(\"purelib\"))')\" "
                         "&& rm -rf /tmp/endstate-plugin\n")
    image = build_task_image(tmp_path / "image" / "Dockerfile", f"harness-pytest3-{source.python}")
    fixture, held = calc_trees(SEES_HEADER)
    tests_pass, holdout = calc_graders(visible=1, held_out=1)

    def verdicts(tree):
        return _graded(image, fixture, held, [tests_pass, holdout], tree)

    right = verdicts(dict(fixture, **files({"calc/ops.py": FIXED})))
    assert {name: v.outcome for name, v in right.items()} == dict.fromkeys(["tests_pass", "holdout", "end_state"],
                                                                            Outcome.PASS), right
    # pytest 3.3 loads plugins itself, through pkg_resources: a distribution the end state adds is never among them.
    planted = verdicts(dict(fixture, **files({"calc/ops.py": FIXED, **PLANTED})))
    assert all(v.outcome is Outcome.PASS for v in planted.values()), planted
    # A module of the plugin's name in the workspace is never loaded as the image's (pytest 3.3 loads it by name).
    shadowed = verdicts(dict(fixture, **files({"calc/ops.py": FIXED, "calcheader.py": b"def pytest_report_header(config):\n"
                                                                                     b"    return 'not the image'\n"})))
    assert shadowed["tests_pass"].outcome is Outcome.FAIL, shadowed
    assert "was shadowed by a module of the workspace" in shadowed["tests_pass"].reason, shadowed
    # The end state's doing: a FAIL that names its error, never an error of the machinery.
    broken = verdicts(dict(fixture, **files({"calc/ops.py": b"raise ImportError('broken by the end state')\n"})))
    assert broken["tests_pass"].outcome is Outcome.FAIL, broken
    assert "ImportError: broken by the end state" in broken["tests_pass"].reason, broken
    assert not any(v.outcome is Outcome.ERROR for v in broken.values()), broken
