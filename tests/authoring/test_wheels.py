"""Which wheels the host takes for a task's image: every glibc the sandbox can run, no newer one."""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile
from pathlib import Path

import pytest

from endstate.errors import SandboxUnavailable
from endstate.sandbox import _pythons, _wheels


def _wheel(folder: Path, version: str, platform: str, abi: str = "cp311") -> None:
    """A real (tiny) binary wheel of `native-demo` for CPython 3.11 (or `abi`'s) on `platform`."""
    info = f"native_demo-{version}.dist-info"
    files = {
        "native_demo/__init__.py": b"VALUE = 1\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: native-demo\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: {abi.rstrip('m')}-{abi}-{platform}\n".encode(),
    }
    record = "".join(f"{p},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}\n"
                     for p, d in files.items()) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(folder / f"native_demo-{version}-{abi.rstrip('m')}-{abi}-{platform}.whl", "w") as archive:
        for path, data in {**files, f"{info}/RECORD": record.encode()}.items():
            archive.writestr(path, data)


def _download(links: Path, dest: Path) -> list[str]:
    _wheels._pip(["--no-index", "--find-links", str(links), "--dest", str(dest), "native-demo"], "resolving native-demo")
    return sorted(p.name for p in dest.glob("*.whl"))


def test_a_manylinux_2_28_wheel_is_taken_and_one_for_a_newer_glibc_is_not(tmp_path):
    links, dest = tmp_path / "links", tmp_path / "dest"
    links.mkdir()
    dest.mkdir()
    _wheel(links, "1.0", "manylinux_2_28_x86_64")  # runs on the sandbox's glibc 2.36
    _wheel(links, "2.0", "manylinux_2_39_x86_64")  # needs a newer glibc than bookworm's
    assert _download(links, dest) == ["native_demo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"]


@pytest.mark.parametrize("platform", ["manylinux_2_24_x86_64", "manylinux_2_5_x86_64", "manylinux1_x86_64"])
def test_every_older_glibc_tag_is_taken(tmp_path, platform):
    links, dest = tmp_path / "links", tmp_path / "dest"
    links.mkdir()
    dest.mkdir()
    _wheel(links, "1.0", platform)
    assert _download(links, dest) == [f"native_demo-1.0-cp311-cp311-{platform}.whl"]


def test_a_wheel_only_for_a_newer_glibc_is_refused_with_what_to_do(tmp_path):
    links, dest = tmp_path / "links", tmp_path / "dest"
    links.mkdir()
    dest.mkdir()
    _wheel(links, "2.0", "manylinux_2_39_x86_64")
    with pytest.raises(SandboxUnavailable, match="--dockerfile"):
        _download(links, dest)


def test_the_wheels_of_another_pythons_image_are_for_its_python_and_its_glibc(tmp_path):
    """Python 3.6 (an abi with its `m`) on Debian bullseye's glibc 2.31: neither the host's 3.11 wheel nor one
    for bookworm's glibc is taken."""
    from endstate.sandbox import python_source

    links, dest = tmp_path / "links", tmp_path / "dest"
    links.mkdir()
    dest.mkdir()
    _wheel(links, "1.0", "manylinux_2_31_x86_64", abi="cp36m")
    _wheel(links, "2.0", "manylinux_2_34_x86_64", abi="cp36m")
    _wheel(links, "3.0", "manylinux_2_17_x86_64")
    bullseye = python_source("3.9")
    _wheels._pip(["--no-index", "--find-links", str(links), "--dest", str(dest), "native-demo"], "resolving",
                 "3.6", bullseye.glibc)
    assert sorted(p.name for p in dest.glob("*.whl")) == ["native_demo-1.0-cp36-cp36m-manylinux_2_31_x86_64.whl"]


def test_a_pinned_file_of_another_python_names_it_and_its_image_on_its_first_line():
    from endstate.sandbox import python_source

    source = python_source("3.13")
    text = f"# python 3.13, glibc 2.41, image {source.tag}\npytest==9.0.1 --hash=sha256:00\n"
    assert _wheels.python_of(text) == ("3.13", (2, 41), "endstate-python:3.13-trixie")
    assert _wheels.python_of("pytest==9.0.1 --hash=sha256:00\n") == ("3.11", (2, 36), "endstate-sandbox:2")


def test_a_conflict_names_the_dependencys_requirements_that_may_have_no_wheel():
    from endstate.authoring._versions import _depended_on

    said = ("resolving astroid failed: astroid 2.6.6 depends on wrapt<1.13 and >=1.11 | astroid 2.6.5 depends on "
            "wrapt<1.13 and >=1.11 | pylint 2.9 depends on astroid==2.6.6 | ERROR: ResolutionImpossible")
    assert _depended_on(said) == ["wrapt<1.13,>=1.11", "astroid==2.6.6"]


@pytest.mark.docker
@pytest.mark.slow
def test_a_dependency_released_as_an_sdist_only_is_built_in_the_image_of_the_tasks_python(tmp_path, monkeypatch):
    """Resolved from PyPI: pylint 2.9 asks astroid 2.6, which asks wrapt<1.13, whose 1.12.1 is an sdist only.
    It is built with the Python of the task's image (3.9, in that image), kept, and taken."""
    from endstate.authoring._versions import resolve_pinned
    from endstate.sandbox import python_source

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # an empty wheelhouse: nothing built yet
    said: list[str] = []
    pinned = resolve_pinned({}, ["astroid>=2.6.0,<2.7"], log=said.append, target=python_source("3.9"))
    assert pinned.startswith("# python 3.9, glibc 2.31, image endstate-python:3.9-bullseye\n")
    assert "\nwrapt==1.12.1 --hash=sha256:" in pinned and "\nastroid==2.6." in pinned, pinned
    assert any(line.startswith("built wrapt-1.12.1-") and "from the sdist of wrapt<1.13,>=1.11" in line
               for line in said), said


def test_a_commit_older_than_the_harnesss_pytest_gets_one_it_runs_under_on_another_python():
    """Resolved from PyPI as of 2015 for Python 3.9: pytest 7.4's dependencies were not out, so the dated
    resolution would fall back to pytest 2.8, which the harness cannot drive (no `-o`)."""
    from endstate.authoring._versions import resolve_pinned
    from endstate.sandbox import python_source

    said: list[str] = []
    pinned = resolve_pinned({}, ["pytest"], made="2015-12-15T00:00:00Z", log=said.append, target=python_source("3.9"))
    assert re.search(r"^pytest==7\.4\.\d+ ", pinned, flags=re.MULTILINE), pinned
    assert re.search(r"^exceptiongroup==", pinned, flags=re.MULTILINE), pinned  # pytest's own, on 3.9


def test_a_commit_resolves_as_of_its_day_on_a_python_older_than_the_harnesss_pytest():
    """Resolved from PyPI as of 2019 for Python 3.6 (Django 3.0's image), a project that asks no pytest: the
    harness's pytest 7.4, offered whatever its date, has no release for 3.6, and its download failed the dated
    resolution, which then took the newest releases the declarations allow (sqlparse 0.4) instead of the day's."""
    from endstate.authoring._versions import resolve_pinned
    from endstate.sandbox import PythonSource

    python36 = PythonSource("3.6", "3.6", "host", "/nowhere", (2, 28))
    said: list[str] = []
    pinned = resolve_pinned({}, ["sqlparse"], made="2019-04-09T10:00:00Z", log=said.append, target=python36)
    assert re.search(r"^sqlparse==0\.3\.0 ", pinned, flags=re.MULTILINE), (pinned, said)
    assert said == ["resolved as of the commit's date, 2019-04-09 (PyPI's upload times)"], said


def test_a_resolution_for_another_python_reads_markers_as_that_python():
    """Resolved from PyPI for Python 3.10 (pydata__xarray-6744's specification): pandas 1.5.3 asks
    `numpy>=1.23.2; python_version >= "3.11"`, which pip run on the host's 3.11 applied, refusing numpy==1.23.0."""
    from endstate.authoring._versions import resolve_pinned
    from endstate.sandbox import python_source

    if "3.10" not in _pythons.host_interpreters():
        pytest.skip("the host has no pyenv Python 3.10 (this machine kind has)")
    pinned = resolve_pinned({}, ["numpy", "pandas"], pins={"numpy": "1.23.0", "pandas": "1.5.3"},
                            target=python_source("3.10"))
    assert re.search(r"^numpy==1\.23\.0 ", pinned, flags=re.MULTILINE), pinned
    assert re.search(r"^pandas==1\.5\.3 ", pinned, flags=re.MULTILINE), pinned


def test_the_projects_own_markers_are_read_as_the_images_python_whatever_python_pip_runs_under():
    """Resolved from PyPI for Python 3.8 (Django 4.0's): no pip with --uploaded-prior-to runs under 3.8, so the
    host's resolves, and it read Django's `backports.zoneinfo; python_version<"3.9"` as its own 3.11 does: the
    image had no backports.zoneinfo, and no Django test module imported (django__django-14752)."""
    from endstate.sandbox import PythonSource, has_wheel, resolve_requirements

    python38 = PythonSource("3.8", "3.8", "host", "/nowhere", (2, 36))
    pinned = resolve_requirements(['backports.zoneinfo; python_version<"3.9"', "tzdata", 'six; python_version>="3.9"'],
                                  target=python38, as_of="2024-08-13")
    assert re.search(r"^backports-zoneinfo==0\.2\.1 ", pinned, flags=re.MULTILINE), pinned
    assert re.search(r"^tzdata==2024\.1 ", pinned, flags=re.MULTILINE) and "six" not in pinned, pinned
    assert not has_wheel("pywatchman; sys_platform != 'win32'", target=python38)  # sdists only, on every day


def test_a_failed_resolution_says_pips_cause_not_its_list_of_versions_for_other_pythons(monkeypatch):
    """pip's line of the versions it ignored for another Python (hundreds, for a Python 3.6 image) came before its
    cause, and a refusal cut at its length named no cause at all (astropy 1.3's environment)."""
    import subprocess

    ignored = "ERROR: Ignored the following versions that require a different python version: " + "; ".join(
        f"{n}.0 Requires-Python >=3.7" for n in range(300))
    stderr = f"{ignored}\nWARNING: Location 'file:///opt/pypi/simple/contextvars/' is ignored\nERROR: Could not find a version that satisfies the requirement contextvars>=2.1 " \
             "(from versions: none)\nERROR: No matching distribution found for contextvars>=2.1\n"
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 1, "", stderr))
    with pytest.raises(SandboxUnavailable) as raised:
        _wheels.resolve_requirements([f"pin-{n}==1.0" for n in range(40)])
    said = str(raised.value)
    assert "Ignored the following" not in said and len(said) < 700, said
    assert said.startswith("resolving pin-0==1.0, pin-1==1.0") and "and 32 more failed: " in said, said
    assert "No matching distribution found for contextvars>=2.1" in said and "WARNING" not in said, said


@pytest.mark.docker
def test_an_sdist_with_no_pyproject_builds_for_a_python_whose_image_has_no_setuptools(tmp_path, monkeypatch):
    """Resolved from PyPI: contextvars 2.4 (a dependency asks `contextvars>=2.1` on Python 3.6: sdists only) has a
    setup.py and no pyproject.toml. Python 3.6's last pip (21.3) builds such an sdist with the image's setuptools,
    which the image of a Python the host holds does not carry, and cannot start a PEP 517 build run from its
    wheel: it built nothing, and astropy 1.3's environment did not resolve."""
    from endstate.authoring._sdists import build_wheel
    from endstate.sandbox import python_source

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # nothing built yet
    source = python_source("3.6")  # pyenv's on this machine kind, else the nearest newer a source here serves
    wheel = build_wheel("contextvars==2.4", target=source)
    assert wheel is not None and wheel.name == "contextvars-2.4-py3-none-any.whl", wheel
