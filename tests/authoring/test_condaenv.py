"""What a conda environment file adds to a task's image: its packages PyPI has, resolved around what holds."""

from __future__ import annotations

from endstate.authoring._condaenv import conda_requirements, with_conda_packages
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


def test_its_packages_join_a_resolution_that_holds_its_versions_kept_and_what_pypi_lacks_left_out():
    """Resolved from PyPI as of SWE-bench's day: the resolution that held keeps every version it chose."""
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
    assert with_conda_packages(pinned, ["endstate-no-such-distribution-xyz"], as_of=ENV_DAY, target=None,
                               log=said.append) == pinned
    assert said == ["none of the conda file's packages can be had from PyPI beside the rest: "
                    "endstate-no-such-distribution-xyz left out"]
