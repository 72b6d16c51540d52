"""A compiled project built as its install builds it: what is read on the host, and (Docker) a tiny
C extension built in the task's image whose module joins the fixture."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_runner import run_endstate

from endstate.authoring._build import (
    BUILD_PACKAGES,
    build_inputs,
    build_products,
    build_requirements,
    builds_matplotlib,
    compiled_sources,
    needs_build,
    objects_folder,
    pre_install_tree,
    system_build_packages,
)
from endstate.authoring._swebenchenv import swebench_env
from endstate.authoring._taskimage import write_task_image
from endstate.errors import UserError
from endstate.sandbox import build_task_image, resolve_requirements
from tests.authoring.test_taskimage import files

SETUP = ('from setuptools import Extension, setup\n\nsetup(name="calc", version="1.0", packages=["calc"],\n'
         '      ext_modules=[Extension("calc._speed", ["calc/_speed.c"])])\n')
PYPROJECT = '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
SPEED_C = """#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *add(PyObject *self, PyObject *args) {
    long a, b;
    if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
    return PyLong_FromLong(a + b);
}

static PyMethodDef methods[] = {{"add", add, METH_VARARGS, "a + b"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speed", NULL, -1, methods};

PyMODINIT_FUNC PyInit__speed(void) { return PyModule_Create(&module); }
"""
CALC = {"setup.py": SETUP, "pyproject.toml": PYPROJECT, "calc/_speed.c": SPEED_C,
        "calc/__init__.py": "from calc import _speed\n\n\ndef add(a, b):\n    return _speed.add(a, -b)\n",
        "tests/test_calc.py": "from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n"}


def test_a_project_that_compiles_extensions_is_told_from_one_that_does_not():
    assert needs_build(files(CALC))
    # C sources of its tests or docs alone, or a setup.py that builds nothing, need no build.
    assert not needs_build(files({**CALC, "setup.py": "from setuptools import setup\nsetup(name='calc')\n"}))
    assert not needs_build(files({"setup.py": SETUP, "docs/example.c": SPEED_C, "calc/__init__.py": ""}))
    # astropy's extension-helpers, with no Extension in setup.py.
    astropy = files({"setup.py": "from extension_helpers import get_extensions\nsetup(ext_modules=get_extensions())\n",
                     "astropy/time/src/parse_times.c": SPEED_C})
    assert needs_build(astropy)


def test_the_builds_own_requirements():
    project = files({"pyproject.toml": '[build-system]\nrequires = ["setuptools", "setuptools_scm>=6.2", "wheel",'
                                       ' "cython==0.29.30", "oldest-supported-numpy", "extension-helpers"]\n',
                     "setup.cfg": "[metadata]\nname = astropy\n[options]\nsetup_requires =\n    setuptools_scm\n"
                                  "    numpy\n[options.extras_require]\ntest =\n    pytest\n"})
    # oldest-supported-numpy stands for numpy, built against the numpy the image pins.
    # cython==0.29.30 as the newest 0.29: a later patch release is what builds for a newer Python.
    assert build_requirements(project) == ["setuptools", "setuptools_scm>=6.2", "wheel", "cython~=0.29.30", "numpy",
                                           "extension-helpers", "setuptools_scm"]
    assert system_build_packages(files(CALC), ["graphviz"]) == sorted({*BUILD_PACKAGES, "graphviz"})
    # matplotlib's build takes Debian's freetype and qhull.
    assert {"libfreetype6-dev", "libqhull-dev"} <= set(system_build_packages(files({"mplsetup.cfg.template": ""})))


def test_swebenchs_pre_install_edits_are_read_and_the_fixture_keeps_its_own():
    project = files({"setup.py": "install_requires = ['Jinja2>=2.3', 'alabaster>=0.7,<0.8']\n",
                     "tox.ini": "[testenv]\ncommands = pytest\n", "src/a.py": "x = 1\n"})
    said: list[str] = []
    edited = pre_install_tree(project, ["sed -i 's/Jinja2>=2.3/Jinja2<3.0/' setup.py",
                                        "sed -i 's/pytest/pytest -rA/' tox.ini", "false"], said.append)
    assert edited["setup.py"].data == b"install_requires = ['Jinja2<3.0', 'alabaster>=0.7,<0.8']\n"
    assert edited["tox.ini"].data == b"[testenv]\ncommands = pytest -rA\n" and edited["src/a.py"] is project["src/a.py"]
    assert project["setup.py"].data.startswith(b"install_requires = ['Jinja2>=2.3'")
    assert any("'false' failed" in line for line in said)


def test_swebenchs_environment_gives_the_image_its_debian_packages_and_edits():
    # Sphinx 7.2 installs graphviz and compiles nothing; its 4.1 edits pin sphinxcontrib-* below Sphinx 5's.
    sphinx = files({"setup.py": "install_requires = ['sphinxcontrib-htmlhelp>=2.0.0', 'Jinja2>=2.3']\n"})
    declared, build, apt = build_inputs(sphinx, swebench_env("sphinx-doc/sphinx", "7.2"))
    assert (declared, build, apt) == (sphinx, [], ["graphviz"])
    declared, _, _ = build_inputs(sphinx, swebench_env("sphinx-doc/sphinx", "4.1"))
    assert declared["setup.py"].data == b"install_requires = ['sphinxcontrib-htmlhelp>=2.0.0,<=2.0.4', 'Jinja2<3.0']\n"
    # A compiled project gets its build's requirements and the compilers besides.
    _, build, apt = build_inputs(files(CALC), None)
    assert build == ["setuptools"] and set(BUILD_PACKAGES) <= set(apt)
    # A fix to one of them would need the build again: the import refuses it (none of Verified's 500 does).
    assert compiled_sources(["calc/__init__.py", "calc/_speed.c", "sklearn/tree/_tree.pyx"]) == [
        "calc/_speed.c", "sklearn/tree/_tree.pyx"]


def test_the_instances_of_one_project_share_one_folder_of_compiled_objects():
    assert objects_folder("astropy__astropy-12907") == objects_folder("astropy__astropy-14309") == "astropy__astropy"
    assert objects_folder("me/calc 2") == "me-calc-2" and objects_folder("calc") == "calc"


def test_a_build_that_declares_no_requirements_still_gets_what_its_setup_imports():
    # scikit-learn 0.21: no pyproject.toml, no setup_requires; numpy.distutils and Cython in its setup.py.
    sklearn = files({"setup.py": "import numpy\nfrom numpy.distutils.core import setup\nsetup()\n",
                     "sklearn/setup.py": "def configuration():\n    config.add_extension('_isotonic', sources=['_isotonic.pyx'])\n",
                     "sklearn/_isotonic.pyx": "def f():\n    pass\n"})
    _, build, _ = build_inputs(sklearn, None)
    assert build == ["setuptools", "numpy", "cython", "cython<3"]


def test_a_cython_bounded_from_below_only_is_taken_below_3():
    # scikit-learn 0.22 asks `Cython>=0.28.5` and SWE-bench's environment `cython`: its .pyx stop on a
    # CompileError under Cython 3 (`sklearn/neighbors/_ball_tree.pyx`), so the build takes 0.29.
    sklearn = files({"pyproject.toml": '[build-system]\nrequires = ["setuptools", "Cython>=0.28.5"]\n',
                     "setup.py": "from numpy.distutils.core import setup\nsetup()\n",
                     "sklearn/setup.py": "config.add_extension('_isotonic', sources=['_isotonic.pyx'])\n",
                     "sklearn/_isotonic.pyx": "def f():\n    pass\n"})
    said: list[str] = []
    _, build, _ = build_inputs(sklearn, swebench_env("scikit-learn/scikit-learn", "0.22"), said.append)
    assert build == ["setuptools", "Cython>=0.28.5", "cython<3"] and any("below 3" in line for line in said)
    # SWE-bench's pin of a Cython 3 (scikit-learn 1.3: cython==3.0.10), or a project's own bound at 3, stands.
    _, build, _ = build_inputs(sklearn, swebench_env("scikit-learn/scikit-learn", "1.3"))
    assert build == ["setuptools", "Cython>=0.28.5"]
    three = {**sklearn, **files({"pyproject.toml": '[build-system]\nrequires = ["Cython>=3.0.8"]\n'})}
    assert build_inputs(three, None)[1] == ["Cython>=3.0.8"]
    # A build that uses no Cython gets none.
    assert "cython<3" not in build_inputs(files(CALC), None)[1]


def test_a_build_through_a_submodule_the_clone_lacks_is_refused_naming_it():
    # astropy 3.x: setup.py builds through astropy_helpers, a git submodule; `git archive` leaves it out.
    astropy = {"setup.py": "import ah_bootstrap\nfrom astropy_helpers.setup_helpers import setup\n\nsetup()\n",
               ".gitmodules": '[submodule "astropy_helpers"]\n\tpath = astropy_helpers\n\turl = https://x/h.git\n',
               "ah_bootstrap.py": "", "astropy/time/src/parse_times.c": SPEED_C}
    with pytest.raises(UserError, match=r"imports astropy_helpers, its git submodule, which the clone does not hold"):
        build_inputs(files(astropy), None)
    _, build, apt = build_inputs(files({**astropy, "astropy_helpers/astropy_helpers/__init__.py": ""}), None)
    assert set(BUILD_PACKAGES) <= set(apt)


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_c_extension_is_built_in_the_image_and_its_module_joins_the_fixture(tmp_path: Path):
    clone = tmp_path / "repos" / "me__calc"
    for path, entry in files(CALC).items():
        (clone / path).parent.mkdir(parents=True, exist_ok=True)
        (clone / path).write_bytes(entry.data)
    git = ["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "calc"]):
        subprocess.run([*git, *args], check=True)
    base = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    line = {"instance_id": "me__calc-1", "repo": "me/calc", "base_commit": base, "problem_statement": "add subtracts",
            "patch": "--- a/calc/__init__.py\n+++ b/calc/__init__.py\n@@ -4,2 +4,2 @@\n def add(a, b):\n"
                     "-    return _speed.add(a, -b)\n+    return _speed.add(a, b)\n",
            "test_patch": "--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n@@ -4,2 +4,6 @@\n def test_zero():\n"
                          "     assert add(0, 0) == 0\n+\n+\n+def test_two():\n+    assert add(1, 1) == 2\n",
            "FAIL_TO_PASS": ["tests/test_calc.py::test_two"], "PASS_TO_PASS": ["tests/test_calc.py::test_zero"]}
    (tmp_path / "calc.jsonl").write_text(json.dumps(line) + "\n")
    run = run_endstate("tasks", "import", "swebench", str(tmp_path / "calc.jsonl"), "--repos", str(tmp_path / "repos"),
                       "--out", str(tmp_path / "out"), "-j", "1", "--no-adequacy", timeout=1500)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "ok   me__calc-1" in run.stdout and "fixture=fail[holdout], solution=pass" in run.stdout
    built = [p.relative_to(tmp_path / "out" / "me__calc-1" / "fixture").as_posix()
             for p in (tmp_path / "out" / "me__calc-1" / "fixture").rglob("*.so")]
    assert len(built) == 1 and built[0].startswith("calc/_speed.cpython-"), built
    # Only the module: neither the build's scratch folder nor its egg-info joined the fixture.
    assert not (tmp_path / "out" / "me__calc-1" / "fixture" / "build").exists()
    system = (tmp_path / "out" / "me__calc-1" / "image" / "system-packages.txt").read_text().split()
    assert "gcc" in system and "python3-dev" in system


@pytest.mark.docker
@pytest.mark.slow
def test_a_second_build_in_one_image_takes_the_objects_the_first_compiled(tmp_path: Path, monkeypatch):
    write_task_image(tmp_path, resolve_requirements(["setuptools", "pytest"]), None, system_build_packages(files(CALC)))
    image = build_task_image(tmp_path / "image" / "Dockerfile", "build-objects")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the image's wheels came from the usual one
    said: list[str] = []
    first = build_products(files(CALC), image, "1.0", said.append)
    second = build_products(files(CALC), image, "1.0", said.append)
    assert "0 of 1 compilations taken" in said[1] and "1 of 1 compilations taken" in said[3], said
    # The module an object of the cache links into is the one a fresh compile gave.
    assert first.keys() == second.keys() and [e.data for e in first.values()] == [e.data for e in second.values()]
    # A changed source is compiled again, and its module is its own.
    faster = files({**CALC, "calc/_speed.c": SPEED_C.replace("a + b", "b + a")})
    third = build_products(faster, image, "1.0", said.append)
    assert "0 of 1 compilations taken" in said[5] and [e.data for e in third.values()] != [e.data for e in first.values()]


#: A setup.py that, as scikit-learn's checks OpenMP, compiles a program in a temporary folder and runs it.
RUNS_A_TEST_PROGRAM = """import os, subprocess, tempfile
folder = tempfile.mkdtemp()
with open(os.path.join(folder, "test_program.c"), "w") as source:
    source.write("int main(void) { return 0; }\\n")
subprocess.check_call(["cc", "test_program.c", "-o", "test_program"], cwd=folder)
subprocess.check_call(["./test_program"], cwd=folder)
"""


READS_ITS_OPTIONS = """\
import configparser, os
config = configparser.ConfigParser()
config.read(os.environ.get("MPLSETUPCFG") or "setup.cfg")
if not config.getboolean("libs", "system_freetype", fallback=False):
    raise SystemExit("error: Failed to download any of the following: freetype-2.6.1.tar.gz")
"""


@pytest.mark.docker
@pytest.mark.slow
def test_a_build_runs_a_program_it_compiled_in_its_temporary_folder(tmp_path: Path, monkeypatch):
    # The sandbox's /tmp is noexec: a build whose temporary folder were there would stop on
    # `PermissionError: ./test_program` (scikit-learn 0.21 and 0.22).
    write_task_image(tmp_path, resolve_requirements(["setuptools", "pytest"]), None, system_build_packages(files(CALC)))
    image = build_task_image(tmp_path / "image" / "Dockerfile", "build-objects")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    said: list[str] = []
    built = build_products(files({**CALC, "setup.py": RUNS_A_TEST_PROGRAM + SETUP}), image, "1.0", said.append)
    # The module is built, and nothing of the build's temporary folder joins the fixture.
    assert [p for p in built if p.endswith(".so")] and all(p.startswith("calc/") for p in built), (built, said)
    # matplotlib 3.4 and older (`setup.cfg.template` beside `setupext.py`) read their build options from setup.cfg or
    # the file MPLSETUPCFG names; unless told to take the system's freetype, the build downloads FreeType 2.6.1.
    shaped = files({**CALC, "setup.cfg.template": "[libs]\n#system_freetype = False\n", "setupext.py": "",
                    "setup.py": READS_ITS_OPTIONS + SETUP})
    assert builds_matplotlib(shaped) and {"libfreetype6-dev", "libqhull-dev"} <= set(system_build_packages(shaped))
    built = build_products(shaped, image, "1.0", said.append)
    assert [p for p in built if p.endswith(".so")] and all(p.startswith("calc/") for p in built), (built, said)
    # 3.5 on: mplsetup.cfg, or the file MPLSETUPCFG names, which the build sets for either.
    newer = files({**CALC, "mplsetup.cfg.template": "[libs]\n#system_freetype = False\n", "setupext.py": "",
                   "setup.py": READS_ITS_OPTIONS.replace('"setup.cfg"', '"mplsetup.cfg"') + SETUP})
    built = build_products(newer, image, "1.0", said.append)
    assert [p for p in built if p.endswith(".so")] and all(p.startswith("calc/") for p in built), (built, said)
