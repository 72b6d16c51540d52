"""SWE-bench's own environment per (repository, version), honoured in the task's image."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from endstate.authoring._swebenchenv import env_requirements, swebench_env
from endstate.authoring._taskimage import declared_requirements, pinned_requirements
from endstate.sandbox._tree import FileEntry, Tree


def files(mapping: dict[str, str]) -> Tree:
    return {path: FileEntry(0o644, text.encode()) for path, text in mapping.items()}


def test_an_instance_finds_the_environment_of_its_repository_and_version():
    flask = swebench_env("pallets/flask", "2.3")
    assert flask is not None and flask.python == "3.11" and "Werkzeug==2.3.7" in flask.pins
    assert swebench_env("pallets/flask", 2.0).python == "3.9"  # a dataset may write the version as a number
    assert swebench_env("astropy/astropy", "v5.3").python == "3.10"
    assert swebench_env("pallets/flask", "9.9") is None and swebench_env("pallets/flask", "") is None
    assert swebench_env("pallets/flask", None) is None and swebench_env("someone/else", "2.3") is None


def test_what_cannot_be_had_here_is_said_and_the_rest_is_taken():
    said: list[str] = []
    env = swebench_env("pydata/xarray", "2022.06")
    also, pins, extras, found = env_requirements(env, files({"setup.py": ""}), "3.11", said.append)
    assert pins["pytest"] == "7.4.0" and pins["numpy"] == "1.23.0" and "numpy" in also and extras == []
    assert any("is Python 3.10; the task's image has Python 3.11" in line for line in said), said
    assert any("conda file ci/requirements/environment.yml: what PyPI has of it is added where it resolves" in line
               for line in said), said
    said.clear()
    _, _, _, found = env_requirements(swebench_env("pallets/flask", "2.3"), files({"requirements/dev.txt": "x\n"}),
                                      "3.11", said.append)
    assert found == ["requirements/dev.txt"] and not any("Python" in line for line in said)
    # Django 1.7-2.2's three steps install and generate the locale its exports name: taken, not "not run".
    said.clear()
    env_requirements(swebench_env("django/django", "2.2"), files({"tests/requirements/py3.txt": "x\n"}), "3.6",
                     said.append)
    assert any("its pre-install steps taken (Debian packages locales" in line for line in said), said
    assert not any("not run" in line for line in said), said


def test_the_environments_extras_and_requirements_file_join_what_the_project_declares():
    project = files({"setup.cfg": "[metadata]\nname = demo\n[options]\ninstall_requires =\n    apples\n"
                                  "[options.extras_require]\ndev =\n    pears\ntests =\n    figs\n",
                     "requirements_dev.txt": "plums==1.0\nflake8\n"})
    assert declared_requirements(project) == ["apples", "figs"]
    assert declared_requirements(project, extras=["dev"], files=["requirements_dev.txt"], also=["setuptools"]) \
        == ["apples", "figs", "pears", "plums==1.0", "setuptools"]


def test_the_image_takes_the_versions_swebench_pins_over_the_lock_file():
    """Resolved from PyPI: flask 2.3's environment pins Werkzeug 2.3.7 and click 8.1.3 (the project's own
    lock file says otherwise), and an unpinned pytest is the one PyPI held on the day its environment stands for."""
    project = files({"pyproject.toml": '[project]\nname = "demo"\ndependencies = ["click", "Werkzeug"]\n',
                     "uv.lock": '[[package]]\nname = "click"\nversion = "8.1.7"\n',
                     "requirements/dev.txt": "iniconfig\n"})
    said: list[str] = []
    pinned, installed = pinned_requirements(project, made="2023-06-01", log=said.append,
                                            env=swebench_env("pallets/flask", "2.3"))
    assert "werkzeug==2.3.7 " in pinned and "click==8.1.3 " in pinned and "itsdangerous==2.1.2 " in pinned
    assert "iniconfig" in installed and any(line.startswith("pytest==8.3.") for line in pinned.splitlines())
    assert any("SWE-bench's environment for pallets/flask" in line for line in said), said
    # MarkupSafe 2.1.1 has no wheel for Python 3.11 (the environment is for 3.11 but was made earlier):
    # that one pin gives way, the others stand.
    assert any(line.startswith("SWE-bench's pin markupsafe==2.1.1 does not resolve") for line in said), said


def _dataset_versions() -> list[tuple[str, str]]:
    text = (Path(__file__).resolve().parents[1] / "data" / "swebench" / "dataset_versions.txt").read_text()
    return [tuple(line.split()) for line in text.splitlines() if line and not line.startswith("#")]


def test_every_repository_and_version_of_the_published_datasets_has_its_python():
    pairs = _dataset_versions()
    assert len(pairs) > 100 and ("django/django", "3.0") in pairs and ("sympy/sympy", "1.12") in pairs
    missing = [pair for pair in pairs if swebench_env(*pair) is None]
    assert not missing, f"no environment (so no Python) for {missing}"
    assert swebench_env("django/django", "3.0").python == "3.6" and swebench_env("django/django", "5.0").python == "3.11"
    assert swebench_env("matplotlib/matplotlib", "3.0").python == "3.7"


@pytest.fixture(scope="module")
def swebench_specs(tmp_path_factory) -> dict:
    """SWE-bench's own specifications table (repository -> version -> spec): from the installed swebench where it
    has one, else read from swebench 4.x's published wheel (5.x dropped the table), fetched from PyPI. Its module
    imports nothing, so it is run on its own, never installed."""
    import os
    import subprocess
    import sys
    import zipfile

    try:
        from swebench.harness.constants import MAP_REPO_VERSION_TO_SPECS_PY
        return MAP_REPO_VERSION_TO_SPECS_PY
    except ImportError:
        pass
    where = tmp_path_factory.mktemp("swebench4")
    got = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
                          "-d", str(where), "swebench>=4.1,<5"], capture_output=True, text=True)
    wheels = sorted(where.glob("swebench-4.*.whl"))
    if got.returncode or not wheels:
        why = f"swebench 4.x (the last with the specifications table) could not be fetched: {got.stderr[-300:]}"
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    table: dict = {}
    exec(zipfile.ZipFile(wheels[-1]).read("swebench/harness/constants/python.py").decode(), table)
    return table["MAP_REPO_VERSION_TO_SPECS_PY"]


def test_each_python_agrees_with_swebenchs_own_specifications(swebench_specs):
    specs = swebench_specs
    disagree = [(repo, version, spec["python"], getattr(swebench_env(repo, version), "python", None))
                for repo, versions in specs.items() for version, spec in versions.items()
                if getattr(swebench_env(repo, version), "python", None) != spec["python"]]
    assert len(specs) >= 18 and not disagree, disagree


def test_a_python_no_source_serves_is_a_deviation_said_in_the_log_and_for_task_toml():
    from endstate.authoring._swebenchenv import env_python, python_deviation

    django = swebench_env("django/django", "2.2")  # SWE-bench names 3.5: no Debian suite, no pyenv 3.5 here
    said: list[str] = []
    source = env_python(django, said.append)
    assert source.wanted == "3.5" and source.python in ("3.6", "3.7", "3.8", "3.9")
    assert python_deviation(django) == source.deviation
    assert source.deviation.startswith("Python 3.5 is named, but no source here serves it")
    assert f"warning: {source.deviation}" in said
    assert python_deviation(swebench_env("psf/requests", "2.27")) == ""  # 3.9: Debian bullseye serves it
    assert env_python(swebench_env("pallets/flask", "2.3")) is None  # 3.11: the sandbox's own


def test_an_environment_is_resolved_as_of_the_day_swebench_stands_for_with_its_pins_whatever_their_date():
    """Resolved from PyPI: Sphinx 3.2 (2020) asks an unbounded setuptools; today's (81 on) has no
    pkg_resources, which it imports, and on the commit's day MarkupSafe<=2.0.1 had no wheel for the
    environment's Python 3.9. SWE-bench's environment was resolved later: as of its day, setuptools 72."""
    project = files({"setup.py": "from setuptools import setup\nsetup(name='Sphinx', install_requires=["
                                 "'setuptools', 'markupsafe<=2.0.1', 'Jinja2>=2.3'])\n"})
    said: list[str] = []
    pinned, _ = pinned_requirements(project, made="2020-08-03T10:00:00Z", log=said.append,
                                    env=swebench_env("sphinx-doc/sphinx", "3.2"))
    assert "\nsetuptools==72.1.0 " in pinned and "\nmarkupsafe==2.0.1 " in pinned and "\njinja2==3.0.3 " in pinned
    assert "resolved as of 2024-08-13, the day the environment it stands for was resolved (PyPI's upload times)" \
        in said, said


def test_a_pin_the_projects_own_install_does_not_satisfy_gives_way_to_what_it_asks():
    """pylint 3.0's environment pins astroid==3.0.0a6, but SWE-bench installs its pins first and the project
    after (`pip install -e .`), which asks astroid>=3.0.0a8 (pylint-dev__pylint-8898: a6 has no `nodes.Try`)."""
    project = files({"pyproject.toml": '[project]\nname = "pylint"\ndependencies = ["astroid>=3.0.0a8,<=3.1.0-dev0"]\n',
                     "requirements_test.txt": "pytest\n"})
    said: list[str] = []
    wanted, pins, _, _ = env_requirements(swebench_env("pylint-dev/pylint", "3.0"), project, "3.9", said.append)
    assert "astroid" not in pins and "astroid" not in wanted  # a bare name would shadow the project's bound
    assert "astroid>=3.0.0a8,<=3.1.0-dev0" in declared_requirements(project, also=wanted)
    assert any("its pin astroid==3.0.0a6 gives way to the project's own `astroid>=3.0.0a8,<=3.1.0-dev0`" in line
               for line in said), said
    _, kept, _, _ = env_requirements(swebench_env("pylint-dev/pylint", "3.0"),
                                     files({"pyproject.toml": '[project]\nname = "pylint"\ndependencies = ["astroid"]\n'}),
                                     "3.9")
    assert kept["astroid"] == "3.0.0a6"


def test_an_exact_pin_of_the_requirements_file_swebench_installs_is_the_version_the_image_takes():
    """pylint 2.15's environment installs requirements_test.txt, whose requirements_test_min.txt pins
    astroid==2.12.13 beside the project's `astroid>=2.12.2,<=2.14.0-dev0`: SWE-bench's install keeps that astroid,
    and the newest the range allows (2.13.5) fails three of pylint 7114's PASS_TO_PASS tests. Resolved from PyPI."""
    project = files({"setup.cfg": "[metadata]\nname = pylint\n[options]\ninstall_requires =\n"
                                  "    astroid>=2.12.2,<=2.14.0-dev0\n    isort>=4.2.5,<6\n",
                     "requirements_test.txt": "-r requirements_test_min.txt\ncoverage~=6.4\n",
                     "requirements_test_min.txt": "-e .[testutils]\n# astroid is also declared in setup.cfg\n"
                                                  "astroid==2.12.13  # Pinned to a specific version for tests\n"
                                                  "isort==9.0.0\n"})
    said: list[str] = []
    pinned, _ = pinned_requirements(project, made="2022-07-31", log=said.append,
                                    env=swebench_env("pylint-dev/pylint", "2.15"))
    assert "astroid==2.12.13 " in pinned, pinned
    # a pin the project's own install refuses gives way, as the environment's own pins do
    assert any("its pin isort==9.0.0 gives way to the project's own `isort>=4.2.5,<6`" in line for line in said), said
    assert "isort==9.0.0" not in pinned


def test_a_pin_the_projects_build_excludes_gives_way_to_the_build():
    """matplotlib 3.5's setup.py asks `setuptools_scm>=4,<7` for its build, and SWE-bench's environment pins
    setuptools-scm==7.1.0: SWE-bench builds apart from the runtime; here both are the image's one environment,
    and the two together made every resolution of matplotlib 3.5's records impossible."""
    project = files({"setup.py": "setup(name='matplotlib', install_requires=['numpy>=1.17'])\n"})
    said: list[str] = []
    wanted, pins, _, _ = env_requirements(swebench_env("matplotlib/matplotlib", "3.5"), project, "3.11", said.append,
                                          build=["setuptools_scm>=4,<7", "certifi>=2020.06.20"])
    assert "setuptools-scm" not in pins and "setuptools-scm" not in wanted and pins["numpy"] == "1.25.2"
    assert any("its pin setuptools-scm==7.1.0 gives way to the project's build requirement `setuptools_scm>=4,<7`"
               in line for line in said), said
    _, kept, _, _ = env_requirements(swebench_env("matplotlib/matplotlib", "3.5"), project, "3.11",
                                     build=["setuptools_scm>=7"])
    assert kept["setuptools-scm"] == "7.1.0"


def test_when_the_lock_files_versions_do_not_resolve_swebenchs_pins_still_hold():
    """Resolved from PyPI: the newest the declarations allow was taken with no pin at all, SWE-bench's
    among them (pydata__xarray-6744 got numpy 2.2 for its pin 1.23.0, and no test module imported)."""
    from endstate.authoring._versions import resolve_pinned

    project = files({"uv.lock": '[[package]]\nname = "six"\nversion = "0.0.404"\n'})  # a version PyPI never had
    said: list[str] = []
    pinned = resolve_pinned(project, ["numpy", "six"], pins={"numpy": "1.26.4"}, log=said.append)
    assert re.search(r"^numpy==1\.26\.4 ", pinned, flags=re.MULTILINE), pinned


def test_what_swebenchs_evaluation_script_exports_is_the_entrys_and_its_locale_is_generated():
    """The published records' `eval_script` (tests/data/swebench/verified-slice.parquet: Django 3.0's
    exports the en_US.UTF-8 locale, the other three nothing) against the entry of each."""
    from endstate.authoring._swebenchenv import env_exports

    pq = pytest.importorskip("pyarrow.parquet")
    records = pq.read_table(Path(__file__).resolve().parents[1] / "data" / "swebench" / "verified-slice.parquet")
    seen = []
    for record in records.to_pylist():
        exported = [line.split(" ", 1)[1] for line in record["eval_script"].splitlines() if line.startswith("export ")]
        assert env_exports(swebench_env(record["repo"], record["version"]))[0] == exported, record["instance_id"]
        seen += exported
    assert "LC_ALL=en_US.UTF-8" in seen
    assert env_exports(swebench_env("django/django", "2.2"))[1] == ["en_US.UTF-8"]
    assert env_exports(swebench_env("django/django", "4.0")) == ([], [])


def test_each_entrys_exports_agree_with_swebenchs_own_specifications(swebench_specs):
    from endstate.authoring._swebenchenv import env_exports

    specs = swebench_specs
    disagree = [(repo, version) for repo, versions in specs.items() for version, spec in versions.items()
                if env_exports(swebench_env(repo, version))[0] != [c.split(" ", 1)[1] for c in spec.get(
                    "eval_commands", []) if c.startswith("export ")]]
    assert not disagree, disagree


def test_a_requirement_no_day_has_a_wheel_of_is_left_out_and_the_environments_day_kept():
    """Resolved from PyPI: Django's test requirements name pywatchman, which PyPI holds as sdists only. The
    resolution as of SWE-bench's day used to give that day up for today's newest of everything (iniconfig
    2.3); it leaves pywatchman out and keeps the day (iniconfig 2.0.0, the one of 2024-08-13)."""
    project = files({"tests/requirements/py3.txt": "iniconfig\npywatchman; sys.platform != 'win32'\n"})
    said: list[str] = []
    left_out: list[str] = []
    pinned, installed = pinned_requirements(project, made="2022-03-01T10:00:00Z", log=said.append,
                                            env=swebench_env("django/django", "4.1"), left_out=left_out)
    assert "\niniconfig==2.0.0 " in pinned and "pywatchman" not in installed, pinned
    assert left_out == ["pywatchman"]
    assert "resolved as of 2024-08-13, the day the environment it stands for was resolved (PyPI's upload times)" \
        in said, said
    assert not any("did not work" in line for line in said), said


def test_a_resolution_past_its_time_fails_in_one_line_without_a_looser_attempt():
    """A Django 4.x image's resolution once ran over 35 minutes; a looser step after a stopped one could take
    as long. Given no time at all, the first pip run is stopped and nothing else is tried."""
    from endstate.authoring._versions import resolve_pinned
    from endstate.errors import ResolutionTimedOut

    said: list[str] = []
    with pytest.raises(ResolutionTimedOut) as raised:
        resolve_pinned({}, ["iniconfig"], made="2023-01-01T00:00:00Z", log=said.append, seconds=0)
    message = str(raised.value)
    assert "\n" not in message and message.startswith("downloading pip ")
    assert "was stopped, unfinished after 0 s, the time a task image's resolution is given" in message
    assert message.endswith("give the task an image of your own (--dockerfile)")
    assert said == []


def test_a_pin_with_no_wheel_for_the_images_python_takes_the_releases_nearest_it():
    """Resolved from PyPI: numpy 1.23.0 has no wheel for Python 3.11 (1.23.2 on have). The newest the declarations
    allowed was taken before, numpy 2, whose headers lack what a tree built against numpy 1 compiles with
    (scikit-learn 1.3's `cnp.int_t`, its environment's numpy==1.19.2 on Python 3.9): the pin's series is taken."""
    from endstate.authoring._versions import _nearer, resolve_pinned

    assert _nearer("1.19.2") == [">=1.19.2,<1.20", ">=1.19.2,<2"] and _nearer("1.0")[0] == ">=1.0,<1.1"
    assert _nearer("0.0.0a0") == []
    said: list[str] = []
    pinned = resolve_pinned(files({}), ["numpy"], pins={"numpy": "1.23.0"}, log=said.append)
    assert re.search(r"^numpy==1\.23\.5 ", pinned, flags=re.MULTILINE), pinned
    assert any("SWE-bench's pin numpy==1.23.0 does not resolve for the task image's Python: the nearest releases "
               "that may are asked for (numpy>=1.23.0,<1.24)" in line for line in said), said


def test_a_dependency_pip_finds_no_wheel_of_is_named_to_be_built_from_its_sdist():
    """astropy 1.3's environment on Python 3.6: a dependency asks `contextvars>=2.1`, released as an sdist only;
    the requirement pip names is built (`_sdists.build_wheel`) where before the resolution failed."""
    from endstate.authoring._versions import _not_found

    said = ("ERROR: Could not find a version that satisfies the requirement contextvars>=2.1 (from versions: none) | "
            "ERROR: No matching distribution found for contextvars>=2.1. The task image needs every dependency")
    assert _not_found(said) == ["contextvars>=2.1"]
    assert _not_found("No matching distribution found for zope.interface[test]>=5,<6 | x") == ["zope.interface[test]>=5,<6"]
    assert _not_found("Cannot install a==1 and b==2") == []


def test_a_resolution_that_did_not_work_is_said_with_its_cause_not_pips_link():
    """Each Django 1.11-3.2 import (Python 3.6) said `did not work (ERROR: ResolutionImpossible: for help visit https://...)`,
    pip's last line; the conflict pip printed before it was cut away."""
    from endstate.authoring._versions import _cause

    failed = ("resolving geoip2, numpy failed: geoip2 4.8.0 depends on aiohttp<4.0.0 and >=3.6.2 | "
              "maxminddb 2.2.0 depends on setuptools>=68 | ERROR: Cannot install geoip2 because these package "
              "versions have conflicting dependencies. | ERROR: ResolutionImpossible: for help visit "
              "https://pip.pypa.io/en/latest/topics/dependency-resolution/#dealing-with-dependency-conflicts. "
              "The task image needs every dependency as a wheel")
    assert _cause(failed) == ("geoip2 4.8.0 depends on aiohttp<4.0.0 and >=3.6.2; "
                              "maxminddb 2.2.0 depends on setuptools>=68")
    assert _cause("resolving x failed: ERROR: Could not find a version that satisfies the requirement x>=9 "
                  "(from versions: 1.0) | ERROR: No matching distribution found for x>=9. The task image needs "
                  "every dependency") == "No matching distribution found for x>=9"
    assert _cause("resolving x failed: pip said nothing. The task image needs every dependency") == "pip said nothing"
    assert _cause("resolving y failed: ERROR: Cannot install y==1 and z==2 because these package versions have "
                  "conflicting dependencies. | ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/x. "
                  "The task image needs") == ("Cannot install y==1 and z==2 because these package versions have "
                                              "conflicting dependencies.")


def test_a_dependencys_sdist_only_requirement_is_built_and_the_environments_day_kept(monkeypatch, tmp_path):
    """The day SWE-bench's environment stands for failed on `contextvars>=2.1` (asked by a dependency on Python
    3.6, sdists only) and was given up for the commit's day, which failed on the harness's pytest: the
    requirement is built and that day tried again."""
    import endstate.authoring._sdists as sdists
    import endstate.sandbox as sandbox
    from endstate.authoring._versions import resolve_pinned
    from endstate.errors import SandboxUnavailable

    wheel = tmp_path / "contextvars-2.4-py3-none-any.whl"
    wheel.write_bytes(b"")
    built: list[str] = []
    asked: list[str] = []

    def resolve(requirements, *, as_of="", undated=(), target=None, deadline=None):
        asked.append(as_of)
        if not built:
            raise SandboxUnavailable("resolving x failed: ERROR: No matching distribution found for contextvars>=2.1")
        return "x==1.0 --hash=sha256:00\n"

    monkeypatch.setattr(sandbox, "resolve_requirements", resolve)
    monkeypatch.setattr(sdists, "build_wheel", lambda requirement, target=None: built.append(requirement) or wheel)
    said: list[str] = []
    assert resolve_pinned(files({}), ["x"], made="2018-04-04", env_day="2024-08-13T00:00:00Z", log=said.append) \
        == "x==1.0 --hash=sha256:00\n"
    assert built == ["contextvars>=2.1"] and asked == ["2024-08-13T00:00:00Z"] * 2, (built, asked)
    assert "resolved as of 2024-08-13, the day the environment it stands for was resolved (PyPI's upload times)" \
        in said, said


def test_an_image_of_a_python_before_3_8_holds_importlib_metadata_whatever_pytest_it_pins():
    """Resolved from PyPI for Python 3.6 (pyenv's here, else the nearest newer): the harness's runner reads the
    image's pytest plugins through importlib_metadata before 3.8. pytest 6 and 7 depend on it there; astropy 1.3's
    environment pins pytest 3.3.1, which does not, and every graded run stopped on `No module named
    'importlib_metadata'`."""
    project = files({"setup.py": "from setuptools import setup\nsetup(name='demo', install_requires=['pytest==3.3.1'])\n"})
    said: list[str] = []
    pinned, _ = pinned_requirements(project, made="2018-04-04T00:00:00Z", log=said.append,
                                    env=swebench_env("django/django", "3.0"))
    assert re.search(r"^pytest==3\.3\.1 ", pinned, flags=re.MULTILINE), pinned
    if pinned.startswith(("# python 3.6", "# python 3.7")):  # this machine kind: pyenv's 3.6
        assert re.search(r"^importlib-metadata==", pinned, flags=re.MULTILINE), pinned


def test_the_nearest_releases_of_a_pin_in_conflict_with_the_rest_let_the_pin_go(monkeypatch):
    """The pin's series has a wheel but the rest cannot have it (pip: `Cannot install numpy<1.20,>=1.19.2 and
    ...`): the pin goes, as before its nearest releases were tried; a declared requirement named so is not
    taken for the culprit."""
    import endstate.authoring._sdists as sdists
    import endstate.sandbox as sandbox
    from endstate.authoring._versions import _unresolvable, resolve_pinned
    from endstate.errors import SandboxUnavailable

    asked: list[list[str]] = []

    def resolve(requirements, *, as_of="", undated=(), target=None, deadline=None):
        asked.append(sorted(requirements))
        if "numpy==1.19.2" in requirements:
            raise SandboxUnavailable("resolving x failed: ERROR: No matching distribution found for numpy==1.19.2")
        if "numpy>=1.19.2,<1.20" in requirements:
            raise SandboxUnavailable("resolving x failed: ERROR: Cannot install numpy>=1.19.2,<1.20 and pandas==1.5.3 "
                                     "because these package versions have conflicting dependencies.")
        return "numpy==1.26.4 --hash=sha256:00\n"

    monkeypatch.setattr(sandbox, "resolve_requirements", resolve)
    monkeypatch.setattr(sandbox, "has_wheel", lambda requirement, target=None: True)
    # The pin's sdist is tried first and builds nothing here (numpy 1.19 does not build for this Python: left to
    # pip, that is minutes of a compiler's work before it fails).
    built: list[str] = []
    monkeypatch.setattr(sdists, "build_wheel", lambda requirement, target=None: built.append(requirement) and None)
    said: list[str] = []
    assert resolve_pinned(files({}), ["numpy", "pandas"], pins={"numpy": "1.19.2"}, log=said.append) \
        == "numpy==1.26.4 --hash=sha256:00\n"
    assert built == ["numpy==1.19.2"], built
    assert [line.split(": ", 1)[1] for line in said if line.startswith("SWE-bench's pin")] == [
        "the nearest releases that may are asked for (numpy>=1.19.2,<1.20)",
        "the version its other pins and the project's declarations allow is taken"], said
    assert asked[-1] == ["numpy", "pandas"], asked
    assert _unresolvable("ERROR: Cannot install numpy>=1.17 and pandas==1.5.3 because ...") == ""


def test_a_pin_pip_lists_beside_the_same_distributions_other_requirements_is_the_culprit(monkeypatch):
    """scikit-learn 1.3's environment pins scipy==1.5.2, which has no wheel for its Python 3.9; pip, asked for the
    project's `scipy`, the pin and a dependency's bound, says `Cannot install scipy, scipy==1.5.2 and scipy>=1.3.2
    because ...`. That names the pin: its nearest releases are asked for, as for a pin pip says it found nothing
    of, instead of the import stopping there (scikit-learn 25500)."""
    import endstate.authoring._sdists as sdists
    import endstate.sandbox as sandbox
    from endstate.authoring._versions import _unresolvable, resolve_pinned
    from endstate.errors import SandboxUnavailable

    def resolve(requirements, *, as_of="", undated=(), target=None, deadline=None):
        if "scipy==1.5.2" in requirements:
            raise SandboxUnavailable("resolving x failed: ERROR: Cannot install scipy, scipy==1.5.2 and scipy>=1.3.2 "
                                     "because these package versions have conflicting dependencies.")
        return "scipy==1.5.4 --hash=sha256:00\n"

    monkeypatch.setattr(sandbox, "resolve_requirements", resolve)
    monkeypatch.setattr(sandbox, "has_wheel", lambda requirement, target=None: True)
    monkeypatch.setattr(sdists, "build_wheel", lambda requirement, target=None: None)
    said: list[str] = []
    assert resolve_pinned(files({}), ["scipy"], pins={"scipy": "1.5.2"}, log=said.append) \
        == "scipy==1.5.4 --hash=sha256:00\n"
    assert "SWE-bench's pin scipy==1.5.2 does not resolve for the task image's Python: the nearest releases that " \
           "may are asked for (scipy>=1.5.2,<1.6)" in said, said
    # A list of more than one distribution names none; a specifier's own commas do not make it one.
    assert _unresolvable("ERROR: Cannot install numpy, numpy<1.20,>=1.19.2 and pandas==1.5.3 because these "
                         "package versions have conflicting dependencies.") == ""
