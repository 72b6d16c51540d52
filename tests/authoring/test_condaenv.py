"""What a conda environment file adds to a task's image: its packages PyPI has, resolved around what holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from endstate.authoring._condaenv import _PROBE, conda_requirements, with_conda_packages
from endstate.authoring._swebenchenv import ENV_DAY
from endstate.authoring._taskimage import _conda_wanted
from endstate.sandbox import resolve_requirements

XARRAY = """\
name: xarray-tests
channels:
  - conda-forge
  - nodefaults
dependencies:
  - bottleneck
  - cdms2
  - dask-core
  - hdf5
  - iris
  - lxml    # Optional dep of pydap
  - matplotlib-base
  - numpy=1.19
  - conda-forge::scipy=1.5.3=py38h828c644_0
  - pandas 1.2.*
  - pint>=0.22
  # - pynio: not compatible with netCDF4>1.5.3
  - pre-commit
  - pytest-cov
  - sphinx-book-theme
  - pip
  - pip:
    - -e .
    - numbagg>=0.1  # pip-only
  - toolz
other: ignored
"""


def test_a_conda_files_dependencies_read_as_pypi_requirements():
    assert conda_requirements(XARRAY) == [
        "bottleneck", "dask", "scitools-iris", "lxml", "matplotlib", "numpy==1.19.*", "scipy==1.5.3",
        "pandas==1.2.*", "pint>=0.22", "pre-commit", "pytest-cov", "sphinx-book-theme", "numbagg>=0.1", "toolz"]
    # the tools around the tests, pytest's plugins and the docs' theme are not what tests import
    assert _conda_wanted(conda_requirements(XARRAY)) == [
        "bottleneck", "dask", "scitools-iris", "lxml", "matplotlib", "numpy==1.19.*", "scipy==1.5.3",
        "pandas==1.2.*", "pint>=0.22", "numbagg>=0.1", "toolz"]
    assert conda_requirements("name: x\nchannels:\n  - conda-forge\n") == []
    # the list at the key's own indentation, as YAML allows
    assert conda_requirements("dependencies:\n- numpy>=1.20\n- pip:\n  - numbagg\n- toolz\nchannels:\n- x\n") == [
        "numpy>=1.20", "numbagg", "toolz"]


def test_its_packages_join_a_resolution_that_holds_its_versions_kept_and_what_pypi_lacks_left_out(
        tmp_path, monkeypatch):
    """Resolved from PyPI as of SWE-bench's day: the resolution that held keeps every version it chose. The next
    record of the environment asks uv nothing: its answer as of that day is kept."""
    import endstate.authoring._condaenv as condaenv

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    pinned = resolve_requirements(["six==1.16.0"], as_of=ENV_DAY)
    said: list[str] = []
    # docopt has no wheel, so no release of pydap can be had: pip says "Cannot install pydap==3.2.2, ..."
    fuller = with_conda_packages(pinned, ["six", "iniconfig<2.1", "endstate-no-such-distribution-xyz", "pydap<3.5"],
                                 as_of=ENV_DAY, target=None, log=said.append)
    assert "\nsix==1.16.0 " in "\n" + fuller and "\niniconfig==2.0.0 " in "\n" + fuller, fuller
    assert "endstate-no-such" not in fuller and "pydap" not in fuller
    assert said == ["the conda file's packages that PyPI has: 1 distribution(s) added beside the rest; left out "
                    "(no wheel, or no version that fits): endstate-no-such-distribution-xyz, pydap<3.5"]
    said.clear()

    def asked_again(*args, **kwargs):
        raise AssertionError("uv asked again")

    monkeypatch.setattr(condaenv, "_solve", asked_again)
    assert with_conda_packages(pinned, ["six", "iniconfig<2.1", "endstate-no-such-distribution-xyz", "pydap<3.5"],
                               as_of=ENV_DAY, target=None, log=said.append) == fuller
    assert said[0] == "the conda file's packages as uv solved them beside the same resolution for an earlier record"
    monkeypatch.undo()
    said.clear()
    assert with_conda_packages(pinned, ["endstate-no-such-distribution-xyz"], as_of=ENV_DAY, target=None,
                               log=said.append) == pinned
    assert said == ["none of the conda file's packages can be had from PyPI beside the rest: "
                    "endstate-no-such-distribution-xyz left out"]


def test_the_image_probe_names_what_raises_at_import_other_than_import_error(tmp_path):
    """cfgrib without conda's ecCodes library raises RuntimeError at import: a test's skip helper takes only
    ImportError for "not installed", so such a package breaks what would skip without it."""
    for name, body in (("badlib", "raise RuntimeError('ecCodes library not found')\n"),
                       ("missinglib", "import endstate_no_such_module\n"), ("finelib", "X = 1\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(body)
        info = tmp_path / f"{name}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        (info / "top_level.txt").write_text(f"{name}\n")
    ran = subprocess.run([sys.executable, "-c", _PROBE, "badlib", "missinglib", "finelib", "not-installed"],
                         capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert json.loads(ran.stdout.splitlines()[-1]) == {"badlib": "badlib: RuntimeError: ecCodes library not found"}
