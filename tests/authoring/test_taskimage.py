"""What a project declares it needs, read from its files; the image folder a task gets for it."""

from __future__ import annotations

import re

from endstate.authoring._installed import project_name, runtime_requirements
from endstate.authoring._taskimage import (
    declared_requirements,
    locked_versions,
    pinned_requirements,
    pytest_of_its_time,
    release_before,
    write_task_image,
)
from endstate.sandbox._tree import FileEntry, Tree


def files(mapping: dict[str, str]) -> Tree:
    return {path: FileEntry(0o644, text.encode()) for path, text in mapping.items()}


def test_pyproject_dependencies_and_test_extras():
    project = files({"pyproject.toml": '[project]\nname = "pkg"\ndependencies = ["attrs>=20"]\n'
                                       '[project.optional-dependencies]\ntest = ["pytest", "hypothesis", "pkg[x]"]\n'
                                       'docs = ["sphinx-theme"]\n[dependency-groups]\ntests = ["freezegun"]\n'})
    assert declared_requirements(project) == ["attrs>=20", "freezegun", "hypothesis", "pytest"]


def test_a_one_line_list_of_setup_cfg_is_split_on_semicolons_as_setuptools_reads_it():
    """astropy 3.x: `test = pytest-astropy; pytest-xdist; ...` is three requirements, not one with a marker."""
    project = files({"setup.cfg": "[metadata]\nname = astropy\n[options]\ninstall_requires = numpy>=1.13\n"
                                  "[options.extras_require]\ntest = pytest-astropy; pytest-xdist; objgraph\n"
                                  "testing =\n    mock; python_version < '3.3'  # old\n"})
    assert declared_requirements(project) == ["mock; python_version < '3.3'", "numpy>=1.13", "objgraph",
                                              "pytest-astropy", "pytest-xdist"]


def test_setup_cfg_setup_py_and_the_requirements_files_they_name():
    project = files({
        "setup.cfg": "[metadata]\nname = pkg\n[options]\ninstall_requires =\n    six\n"
                     "[options.extras_require]\ntesting =\n    mock\n",
        "setup.py": "REQUIRES = ['chardet']\nsetup(install_requires=REQUIRES, tests_require=['nose'])\n"
                    "open('requirements.txt')\n",
        "requirements.txt": "# runtime\nidna>=2 # why\n-r requirements-extra.txt\n",
        "requirements-extra.txt": "certifi\n",
        "tox.ini": "[testenv]\ndeps =\n    pytest-cov\n    -r{toxinidir}/requirements.txt\n    toml\n",
    })
    assert declared_requirements(project) == ["certifi", "chardet", "idna>=2", "mock", "nose", "pytest-cov", "six",
                                              "toml"]


def test_setup_py_install_requires_formatted_from_its_constants_in_a_dict_it_spreads():
    # scikit-learn 0.22: `setup(**metadata)`, `metadata = dict(install_requires=['joblib>={}'.format(...)])`
    # in a function; NUMPY_MIN_VERSION is set in a branch (PyPy's or not), so its bound is not known.
    setup_py = ("JOBLIB_MIN_VERSION = '0.11'\nif PYPY:\n    NUMPY_MIN_VERSION = '1.14.0'\nelse:\n"
                "    NUMPY_MIN_VERSION = '1.11.0'\n\n\ndef setup_package():\n"
                "    metadata = dict(name='scikit-learn', install_requires=[\n"
                "        'numpy>={}'.format(NUMPY_MIN_VERSION), 'joblib>={}'.format(JOBLIB_MIN_VERSION)])\n"
                "    setup(**metadata)\n")
    project = files({"setup.py": setup_py})
    assert declared_requirements(project) == ["joblib>=0.11", "numpy"]
    assert runtime_requirements(project) == ["numpy", "joblib>=0.11"] and project_name(project) == "scikit-learn"


def test_setup_py_extras_built_in_steps_are_followed():
    # marshmallow 2.x (marshmallow-code__marshmallow-1524, SWE-bench's env installs `.[dev]`): the dev extra is
    # the sum of the others, set after the dict; its simplejson is what tests/test_validate.py imports.
    setup_py = ("EXTRAS_REQUIRE = {'reco': ['python-dateutil', 'simplejson'], 'tests': ['pytest', 'pytz'],\n"
                "                  'lint': ['flake8==3.7.4']}\n"
                "EXTRAS_REQUIRE['dev'] = (EXTRAS_REQUIRE['reco'] + EXTRAS_REQUIRE['tests'] + EXTRAS_REQUIRE['lint']\n"
                "                         + ['tox'])\n"
                "tests_require = ['nose']\ntests_require += ['mock']\nrequires = ['six']\nrequires.append('attrs')\n"
                "setup(extras_require=EXTRAS_REQUIRE, install_requires=requires,\n"
                "      tests_require=tests_require + ['freezegun'])\n")
    project = files({"setup.py": setup_py})
    assert declared_requirements(project, extras=["dev"]) == ["attrs", "freezegun", "mock", "nose", "pytest",
                                                              "python-dateutil", "pytz", "simplejson", "six"]
    # A name a branch or a loop may change is no longer known: read as before (its first literal), or left out.
    branched = setup_py.replace("requires.append('attrs')", "if PY2:\n    requires.append('attrs')")
    assert "attrs" not in declared_requirements(files({"setup.py": branched}), extras=["dev"])
    assert "six" in declared_requirements(files({"setup.py": branched}), extras=["dev"])
    # What reads as no plain value (a list as a key) leaves the name unknown, never an error.
    odd = files({"setup.py": "KEYS = ['a']\nextras = {KEYS: ['x']}\nsetup(install_requires=['six'], extras_require=extras)\n"})
    assert declared_requirements(odd, extras=["dev"]) == ["six"]


def test_setup_py_install_requires_gathered_from_its_setup_helpers_packages():
    # matplotlib before 3.3 (matplotlib__matplotlib-13989): setup.py extends install_requires with each
    # package's `get_install_requires()`, which setupext.py's classes return as literal lists.
    setup_py = ("import setupext\nfrom setupext import print_line\nmpl_packages = [setupext.Matplotlib(), "
                "setupext.Numpy()]\ninstall_requires = []\nfor package in mpl_packages:\n"
                "    install_requires.extend(package.get_install_requires())\n"
                "setup(name='matplotlib', install_requires=install_requires)\n")
    setupext = ("class SetupPackage:\n    def get_install_requires(self):\n        \"\"\"None.\"\"\"\n"
                "        return []\n\n\nclass Matplotlib(SetupPackage):\n    def get_install_requires(self):\n"
                "        return ['cycler>=0.10', 'kiwisolver>=1.0.1']\n\n\nclass Numpy(SetupPackage):\n"
                "    def get_install_requires(self):\n        return ['numpy>=1.11']\n\n    def other(self):\n"
                "        return ['not-a-requirement']\n")
    project = files({"setup.py": setup_py, "setupext.py": setupext})
    assert runtime_requirements(project) == ["cycler>=0.10", "kiwisolver>=1.0.1", "numpy>=1.11"]
    assert "kiwisolver>=1.0.1" in declared_requirements(project)
    # A helper module setup.py does not call for its packages' requirements is not read.
    unasked = files({"setup.py": "import setupext\nsetup(name='x')\n", "setupext.py": setupext})
    assert runtime_requirements(unasked) == []


def test_a_test_extra_that_names_the_projects_own_extras_takes_them_in():
    project = files({"pyproject.toml": '[project]\nname = "attrs"\n[project.optional-dependencies]\n'
                                       'tests-no-zope = ["hypothesis", "pytest>=4.3.0"]\n'
                                       'tests = ["attrs[tests-no-zope]", "zope.interface"]\ndocs = ["furo"]\n'})
    assert declared_requirements(project) == ["hypothesis", "pytest>=4.3.0", "zope.interface"]


def test_release_lint_typing_and_docs_tools_are_left_out():
    project = files({
        "pyproject.toml": '[project]\nname = "pkg"\ndependencies = ["idna"]\n[project.optional-dependencies]\n'
                          'tests = ["pytest-mock", "coverage", "pytest-cov", "tbump", "types-pkg_resources", "mypy",'
                          ' "flake8-bugbear", "black", "ruff", "pre-commit", "twine", "sphinx-rtd-theme", "foo-stubs",'
                          ' "pytest-black", "setuptools_scm"]\n',
    })
    assert declared_requirements(project) == ["coverage", "idna", "pytest-cov", "pytest-mock"]
    # Unless the configuration's addopts needs it.
    assert declared_requirements(project, keep=["pytest-black"]) == ["coverage", "idna", "pytest-black", "pytest-cov",
                                                                     "pytest-mock"]


def test_what_the_project_needs_to_run_is_never_tooling():
    # Sphinx's own setup.py (its list assigned above setup()) and pylint's setup.cfg.
    sphinx = files({"setup.py": "from setuptools import setup\ninstall_requires = ['sphinxcontrib-applehelp',"
                                " 'Jinja2>=2.3']\nsetup(name='Sphinx', install_requires=install_requires,"
                                " extras_require={'test': ['pytest', 'sphinx-testing']})\n"})
    assert declared_requirements(sphinx) == ["Jinja2>=2.3", "pytest", "sphinxcontrib-applehelp"]
    pylint = files({"setup.cfg": "[metadata]\nname = pylint\n[options]\ninstall_requires =\n    isort>=4.2.5,<6\n"
                                 "    mccabe\n[options.extras_require]\ntesting =\n    black\n    pytest\n"})
    assert declared_requirements(pylint) == ["isort>=4.2.5,<6", "mccabe", "pytest"]


def test_one_requirement_per_name_and_environment_marker():
    project = files({"pyproject.toml": '[project]\nname = "pylint"\ndependencies = ["dill>=0.2; python_version<\'3.11\'",'
                                       ' "dill>=0.3.6; python_version>=\'3.11\'", "astroid"]\n'
                                       '[project.optional-dependencies]\ntest = ["astroid>=2", "dill>=0.2; '
                                       'python_version < \'3.11\'"]\n'})
    assert declared_requirements(project) == ["astroid", "dill>=0.2; python_version<'3.11'",
                                              "dill>=0.3.6; python_version>='3.11'"]


def test_tox_factor_lines_count_only_for_a_plain_test_run():
    tox = ("[tox]\nenvlist = py3{8,11}, docs\n[testenv]\ndeps =\n    mock\n    dev: -r requirements-dev.txt\n"
           "    docs,lint: sphinx-ext\n    py311: freezegun\n    !py27: six\n    py311-cov: covplug\n"
           "    {[base]deps}\n")
    assert declared_requirements(files({"tox.ini": tox})) == ["freezegun", "mock", "six"]
    # tox's configuration inside pyproject.toml, and the requirements file it names.
    legacy = files({"pyproject.toml": "[tool.tox]\nlegacy_tox_ini = \"\"\"\n[testenv]\ndeps = -r tests/reqs.txt\n\"\"\"\n",
                    "tests/reqs.txt": "python-dateutil\n"})
    assert declared_requirements(legacy) == ["python-dateutil"]


def test_markers_continued_over_lines_and_test_requirements_files():
    cfg = ("[metadata]\nname = inflect\n[options]\ninstall_requires =\n\tpydantic>=1.9.1\n"
           "\ttyping_extensions ; python_version < '3.8'\n[options.extras_require]\ntesting =\n\t# upstream\n"
           "\tpytest >= 6\n\tpygments; \\\n\t\t# a reason, on a line of its own\n\t\tpython_version < '3.12'\n")
    project = files({"setup.cfg": cfg, "tests/requirements.txt": "hypothesis  # property tests\n"})
    assert declared_requirements(project) == ["hypothesis", "pydantic>=1.9.1", "pygments; python_version < '3.12'",
                                              "pytest >= 6", "typing_extensions ; python_version < '3.8'"]


def test_the_image_folder(tmp_path):
    assert write_task_image(tmp_path, "six==1.17.0 --hash=sha256:00\n") == "image/Dockerfile"
    dockerfile = (tmp_path / "image/Dockerfile").read_text()
    assert dockerfile.count("FROM endstate-sandbox:2") == 1 and "--no-index" in dockerfile
    assert "--require-hashes" in dockerfile
    assert (tmp_path / "image/requirements.txt").read_text() == "six==1.17.0 --hash=sha256:00\n"


def test_a_commit_gets_the_pytest_of_its_time():
    assert pytest_of_its_time("2021-05-03T10:00:00+02:00") == "pytest<8.0"  # dateutil's era: 7.4 at most
    assert pytest_of_its_time("2024-05-01") == "pytest<8.3"
    assert pytest_of_its_time("2025-12-01T00:00:00Z") == ""  # the newest is of its time
    assert pytest_of_its_time("") == ""


def test_an_old_commits_image_pins_the_pytest_of_its_time():
    """Resolved from PyPI (the one download): an unpinned pytest of a 2021 commit is a 7.x one,
    and a project that pins a newer one keeps its pin, the bound dropped."""
    project = files({"pyproject.toml": '[project]\nname = "demo"\ndependencies = ["iniconfig"]\n'})
    pinned, _ = pinned_requirements(project, made="2021-05-03T10:00:00+02:00")
    assert re.search(r"^pytest==7\.\d+\.\d+ ", pinned, flags=re.MULTILINE), pinned
    pinned_new, _ = pinned_requirements(files({"pyproject.toml": '[project]\nname = "demo"\n'
                                                                 'dependencies = ["pytest==8.3.5"]\n'}),
                                        made="2021-05-03")
    assert "pytest==8.3.5 " in pinned_new


def test_pytest_s_own_tree_gets_no_other_pytest_in_its_image(tmp_path):
    """pytest's tests run the tree's own pytest (SWE-bench installs it in place): its image holds what the tree
    needs and no pytest of PyPI's, of its time or any other, and its build checks that none is importable.
    Its metadata goes beside pluggy's, which every pytest needs."""
    from endstate.authoring._installed import project_metadata

    project = files({"pyproject.toml": '[project]\nname = "pytest"\nversion = "5.4.0"\ndependencies = ["pluggy"]\n'})
    pinned, installed = pinned_requirements(project, made="2020-06-01")
    assert "pluggy" in installed and "pytest" not in installed, pinned
    write_task_image(tmp_path, pinned, project_metadata(project, "5.4.0"))
    dockerfile = (tmp_path / "image/Dockerfile").read_text()
    assert "import os, pluggy; print(os.path.dirname(os.path.dirname(pluggy.__file__)))" in dockerfile
    assert "assert not (u.find_spec('pytest') or u.find_spec('_pytest'))" in dockerfile
    assert "import pytest" not in dockerfile


def test_poetry_dependencies_and_its_dev_group_in_pep_440():
    project = files({"pyproject.toml": '[tool.poetry]\nname = "tomlkit"\n[tool.poetry.dependencies]\n'
                                       'python = ">=3.9"\nattrs = "^0.4"\nlocal = { path = "../x" }\n'
                                       'extra = { version = "*", optional = true }\n'
                                       '[tool.poetry.group.dev.dependencies]\npytest = "^7.2.0"\n'
                                       'PyYAML = "~6.0"\nmypy = "1.19.1"\n[tool.poetry.group.docs.dependencies]\n'
                                       'furo = "*"\n'})
    assert declared_requirements(project) == ["attrs>=0.4,<0.5", "pytest>=7.2.0,<8", "PyYAML>=6.0,<6.1"]


UV_LOCK = ('version = 1\n[[package]]\nname = "pytest"\nversion = "8.3.5"\n[[package]]\nname = "iniconfig"\n'
           'version = "2.0.0"\n[[package]]\nname = "numpy"\nversion = "1.26.4"\n[[package]]\nname = "numpy"\n'
           'version = "2.2.0"\n')


def test_a_lock_file_pins_what_the_project_resolved():
    assert locked_versions(files({"uv.lock": UV_LOCK})) == {"pytest": "8.3.5", "iniconfig": "2.0.0"}
    assert locked_versions(files({"poetry.lock": '[[package]]\nname = "PyYAML"\nversion = "6.0.1"\n'})) \
        == {"pyyaml": "6.0.1"}
    assert locked_versions(files({"uv.lock": "not toml ["})) == {}


def test_the_image_takes_the_locked_pytest_over_the_newest():
    """Resolved from PyPI: click's uv.lock pins pytest 9.0.2, and a newer pytest makes its suite's
    generator-fed parametrize an error under its filterwarnings = error."""
    project = files({"pyproject.toml": '[project]\nname = "demo"\ndependencies = ["iniconfig"]\n'
                                       '[dependency-groups]\ntests = ["pytest"]\n', "uv.lock": UV_LOCK})
    pinned, _ = pinned_requirements(project, made="2026-01-01")
    assert "pytest==8.3.5 " in pinned and "iniconfig==2.0.0 " in pinned


def test_a_declared_distribution_with_no_wheel_is_left_out_and_said_so():
    """Resolved from PyPI: pywin32 has wheels for Windows alone, none for the sandbox's platform tags.
    The image is made without it (its tests fail or skip), where the whole image used to fail; pytest
    itself is never left out. (PyQt6, astroid's, was the example until manylinux_2_28 wheels were taken.)"""
    said = []
    project = files({"pyproject.toml": '[project]\nname = "demo"\ndependencies = ["iniconfig", "pywin32"]\n'})
    pinned, installed = pinned_requirements(project, log=said.append)
    assert "iniconfig" in installed and "pytest" in installed and "pywin32" not in installed
    assert any(line.startswith("left out of the task's image: pywin32, ") for line in said), said


def test_a_pin_of_a_release_with_only_an_sdist_is_built_into_a_wheel_once(tmp_path, monkeypatch):
    """Resolved from PyPI: blinker 1.4 is an sdist only (flask's old requirements pin it). It is built
    into a pure wheel kept by the sdist's sha256, so a second image takes the very same wheel."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # an empty wheelhouse: nothing built yet
    said = []
    project = files({"pyproject.toml": '[project]\nname = "demo"\ndependencies = ["iniconfig", "blinker==1.4"]\n'})
    pinned, installed = pinned_requirements(project, log=said.append)
    assert "blinker" in installed and "pytest" in installed
    assert any(line.startswith("built blinker-1.4-py3-none-any.whl from the sdist of blinker==1.4") for line in said)
    said.clear()
    again, _ = pinned_requirements(project, log=said.append)
    assert not any(x.startswith("built ") for x in said), said
    line = next(x for x in pinned.splitlines() if x.startswith("blinker==1.4 --hash=sha256:"))
    assert line in again.splitlines()


def test_everything_resolves_as_of_the_commit_date_from_pypi_upload_times():
    """Resolved from PyPI: a commit of 2023-11-01 gets werkzeug 3.0.1 (out 2023-10-24; 3.0.2 came in
    2024), not today's, whatever other index the host configures. A commit older than pytest 7.4 (the
    oldest the harness is tested with) still gets 7.4.4, whatever its date."""
    said = []
    project = files({"pyproject.toml": '[project]\nname = "demo"\ndependencies = ["werkzeug"]\n'})
    pinned, _ = pinned_requirements(project, made="2023-11-01T12:00:00+00:00", log=said.append)
    assert re.search(r"^werkzeug==3\.0\.1 ", pinned, flags=re.MULTILINE), pinned
    assert re.search(r"^pytest==7\.4\.3 ", pinned, flags=re.MULTILINE), pinned  # 7.4.4 came on 2023-12-31
    assert "resolved as of the commit's date, 2023-11-01 (PyPI's upload times)" in said
    old, _ = pinned_requirements(files({"pyproject.toml": '[project]\nname = "demo"\ndependencies = ["six"]\n'}),
                                 made="2021-03-01T00:00:00Z")
    assert re.search(r"^pytest==7\.4\.4 ", old, flags=re.MULTILINE) and re.search(r"^six==1\.15\.0 ", old,
                                                                                   flags=re.MULTILINE), old


def test_a_name_a_newer_major_release_removed_takes_the_release_before():
    """requests pins httpbin 0.10.0, which imports what Werkzeug 3 removed, and bounds no Werkzeug."""
    output = ("from werkzeug.http import parse_authorization_header | ImportError: cannot import name "
              "'parse_authorization_header' from 'werkzeug.http' (/usr/local/lib/python3.11/dist-packages/...)")
    pinned = "httpbin==0.10.0 --hash=sha256:aa\nwerkzeug==3.0.1 --hash=sha256:bb\n"
    assert release_before(output, pinned, ["httpbin==0.10.0"]) == "werkzeug<3"
    # A later minor goes back a minor: Flask 2.3 removed flask.escape, which httpbin 0.10.0 imports.
    escape = "ImportError: cannot import name 'escape' from 'flask' (/usr/local/lib/...)"
    assert release_before(escape, "flask==2.3.3 --hash=sha256:cc\n", []) == "flask<2.3"
    assert release_before(output, pinned, ["Werkzeug<4"]) == ""  # the project bounds it: its own to fix
    assert release_before(output, pinned, ["Werkzeug >= 2.0"]) == "werkzeug<3"  # unbounded: the newest then
    assert release_before("ImportError: cannot import name 'x' from 'pkg'", pinned, []) == ""  # not installed
    assert release_before("AssertionError: 1 != 2", pinned, []) == ""


def test_a_requirement_that_is_a_folder_of_the_tree_is_left_out():
    """flask's requirements/tests.in named `examples/tutorial[test]`, a folder of its own tree; its pin
    of pip (the image's installer, which must run on Python 3.11) is not the tests' either."""
    project = files({"requirements/tests.txt": "pytest\nexamples/tutorial[test]\n./other\npip==21.1.2\n",
                     "setup.cfg": "[options.extras_require]\ntests =\n    -r requirements/tests.txt\n"})
    assert declared_requirements(project, files=["requirements/tests.txt"]) == ["pytest"]


def test_a_requirement_that_is_a_url_is_left_out_and_one_named_at_a_url_is_taken_by_its_name():
    """Sphinx 3.1's tox.ini asks `git+https://github.com/html5lib/html5lib-python` (no PyPI name: read as a
    distribution `git`, which does not resolve); `name @ url` names the distribution PyPI releases."""
    project = files({"tox.ini": "[testenv]\ndeps =\n    git+https://github.com/html5lib/html5lib-python  # refs\n"
                                "    https://example.org/x-1.0.tar.gz\n    file:///tmp/y\n",
                     "setup.py": "from setuptools import setup\nsetup(name='demo', install_requires=["
                                 "'html5lib', 'attrs @ git+https://github.com/python-attrs/attrs'])\n"})
    assert declared_requirements(project) == ["attrs", "html5lib"]
