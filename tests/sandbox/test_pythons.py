"""Where the image of the Python a task names comes from, and that another is never taken silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from endstate.errors import SandboxUnavailable
from endstate.sandbox._pythons import (
    PythonSource,
    host_interpreters,
    pip_for,
    python_source,
    source_of_tag,
    write_context,
)


def _install(folder: Path) -> Path:
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python3").write_text("")
    return folder


def test_a_debian_suite_serves_its_python_and_the_hosts_interpreter_serves_the_others(tmp_path):
    hosted = {"3.6": tmp_path / "3.6.15", "3.8": tmp_path / "3.8.18"}
    bullseye = python_source("3.9", hosted=hosted)
    assert (bullseye.kind, bullseye.origin, bullseye.tag, bullseye.glibc) == ("debian", "bullseye",
                                                                              "endstate-python:3.9-bullseye", (2, 31))
    assert python_source("3.13", hosted=hosted).tag == "endstate-python:3.13-trixie"
    host = python_source("3.6", hosted=hosted)
    assert (host.kind, host.origin, host.tag, host.deviation) == ("host", str(tmp_path / "3.6.15"),
                                                                  "endstate-python:3.6-host", "")
    assert host.said() == f"Python 3.6 from the host's {tmp_path / '3.6.15'}"


def test_a_registry_the_user_names_comes_first():
    source = python_source("3.9", registry="localhost:5000/library/", hosted={})
    assert (source.kind, source.origin, source.tag) == ("registry", "localhost:5000/library/python:3.9",
                                                        "endstate-python:3.9-registry")


def test_where_no_source_serves_it_the_nearest_newer_is_taken_and_said():
    source = python_source("3.5", hosted={"3.7": Path("/x/3.7.16")})
    assert (source.wanted, source.python, source.kind) == ("3.5", "3.7", "host")
    assert source.deviation.startswith("Python 3.5 is named, but no source here serves it")
    assert source.deviation.endswith("Python 3.7 instead, the nearest newer")
    assert python_source("3.10", hosted={}).tag == "endstate-python:3.11-bookworm"
    with pytest.raises(SandboxUnavailable, match="3.4 is not one endstate knows"):
        python_source("3.4", hosted={})


def test_the_hosts_interpreters_are_pyenvs_and_uvs_newest_of_each_version(tmp_path, monkeypatch):
    monkeypatch.delenv("PYENV_ROOT", raising=False)
    monkeypatch.delenv("UV_PYTHON_INSTALL_DIR", raising=False)
    versions = tmp_path / ".pyenv" / "versions"
    for name in ("3.6.9", "3.6.15", "3.9.18", "2.7.18", "3.10-dev"):
        _install(versions / name)
    (versions / "3.8.18").mkdir()  # no interpreter in it
    uv = _install(tmp_path / ".local" / "share" / "uv" / "python" / "cpython-3.12.1-linux-x86_64-gnu")
    assert host_interpreters(tmp_path) == {"3.6": versions / "3.6.15", "3.9": versions / "3.9.18", "3.12": uv}


def test_a_tag_names_the_source_it_was_made_from():
    assert source_of_tag("endstate-python:3.13-trixie") == python_source("3.13", hosted={})
    assert source_of_tag("endstate-python:3.9-registry", registry="localhost:5000/library").origin == \
        "localhost:5000/library/python:3.9"
    with pytest.raises(SandboxUnavailable, match="Debian trixie does not ship Python 3.9"):
        source_of_tag("endstate-python:3.9-trixie")
    with pytest.raises(SandboxUnavailable, match="is not an image of endstate's Pythons"):
        source_of_tag("python:3.9")


def test_a_debian_context_installs_the_suites_python_and_checks_its_version(tmp_path):
    write_context(python_source("3.9", hosted={}), tmp_path)
    dockerfile = (tmp_path / "Dockerfile").read_text()
    assert dockerfile.splitlines()[1] == "FROM debian:bullseye-slim"
    assert "python3 python3-distutils python-is-python3 procps git" in dockerfile
    assert "sys.version_info[:2] == (3, 9)" in dockerfile and "PIP_BREAK_SYSTEM_PACKAGES=1" in dockerfile


_PYENV = sorted((Path.home() / ".pyenv" / "versions").glob("3.9.*"))


@pytest.mark.skipif(not _PYENV, reason="the host has no pyenv Python 3.9 (this machine kind has)")
def test_the_hosts_interpreter_is_copied_with_the_libraries_it_links_against(tmp_path):
    source = PythonSource("3.9", "3.9", "host", str(_PYENV[-1]), (2, 36))
    write_context(source, tmp_path)
    dockerfile = (tmp_path / "Dockerfile").read_text()
    assert dockerfile.splitlines()[1] == "FROM debian:bookworm-slim" and "COPY python/ /usr/local/" in dockerfile
    assert (tmp_path / "python" / "bin" / "python3").exists() and not list((tmp_path / "python" / "bin").glob("pip*"))
    assert (tmp_path / "python" / "lib" / "python3.9" / "os.py").is_file()
    assert not (tmp_path / "python" / "lib" / "python3.9" / "test").exists()
    libraries = {p.name for p in (tmp_path / "lib").iterdir()}
    assert {"libssl.so.3", "libffi.so.8", "libsqlite3.so.0"} <= libraries, libraries
    assert not any(name.startswith(("libc.so", "libm.so", "ld-linux", "libX11")) for name in libraries), libraries


_PYENV_310 = host_interpreters().get("3.10")


@pytest.mark.skipif(not _PYENV_310, reason="the host has no pyenv Python 3.10 (this machine kind has)")
def test_pip_for_another_python_runs_under_it_and_reads_markers_as_it_does(tmp_path):
    """pip reads a requirement's markers for the Python it runs on: the host's pip, run under the host's 3.10."""
    import subprocess

    pip, env = pip_for("3.10", tmp_path)
    said = subprocess.run([*pip, "--version"], capture_output=True, text=True, env=env, check=True).stdout
    assert "(python 3.10)" in said and pip[0] == str(_PYENV_310 / "bin" / "python3"), said
    import pip as hosts_pip

    assert f"pip {hosts_pip.__version__} " in said, said  # the host's pip (26 knows --uploaded-prior-to), not 3.10's
    assert pip_for("3.6", tmp_path, hosted={"3.6": _PYENV_310})[0][0] != str(_PYENV_310 / "bin" / "python3")


@pytest.mark.skipif(not _PYENV, reason="the host has no pyenv Python 3.9 (this machine kind has)")
def test_pip_for_a_python_the_hosts_pip_does_not_run_under_is_the_newest_that_does(tmp_path):
    """pip 26.3 needs 3.10: for a 3.9 image, pip 26.0 (the first that resolves as of a day), run from its wheel."""
    import subprocess

    pip, env = pip_for("3.9", tmp_path)
    said = subprocess.run([*pip, "download", "--help"], capture_output=True, text=True, env=env, check=True).stdout
    assert pip[0] == str(_PYENV[-1] / "bin" / "python3") and pip[1].endswith(".whl/pip") and "--uploaded-prior-to" in said
