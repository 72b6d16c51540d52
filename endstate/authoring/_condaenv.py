"""The packages of a conda environment file, where PyPI has them: SWE-bench's environment of xarray and of
matplotlib 3.5+ is `conda env update -f environment.yml` (conda-forge), then its pip pins.

A task's image installs wheels from PyPI only. `conda_requirements` reads the file's `dependencies` (and its
`pip:` list) as PyPI requirements: conda's `name=1.2` is `name==1.2.*`, a build string is dropped, a few
conda-forge names are PyPI's under another name (`dask-core`, `matplotlib-base`, `iris`), and what conda
ships that is no Python distribution on PyPI (`hdf5`, `gtk3`, compilers, the interpreter) is left out.
`with_conda_packages` adds them to a resolution that already holds: every version it chose stays as it
was, the file's packages are resolved around them as of the environment's day, and any of them that
cannot be had (no wheel for the image's Python, no version that fits) is left out and said. Tests that
need one skip as before; the rest run as they ran in SWE-bench's environment instead of skipping.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from endstate.authoring._versions import requirement_name
from endstate.errors import ResolutionTimedOut, SandboxUnavailable
from endstate.sandbox import PythonSource

__all__ = ["conda_requirements", "with_conda_packages"]

#: conda-forge names that PyPI knows by another; None: conda ships it, PyPI has no wheel of it to offer
#: (system libraries, the interpreter, GUI toolkits built against them, programs).
_PYPI_NAME: dict[str, str | None] = {
    "dask-core": "dask", "matplotlib-base": "matplotlib", "iris": "scitools-iris", "pytables": "tables",
    "python-graphviz": "graphviz", "pseudonetcdf": "PseudoNetCDF",
    **{name: None for name in (
        "python", "pip", "hdf5", "libnetcdf", "netcdf-fortran", "cdms2", "pynio", "gtk3", "graphviz", "ffmpeg",
        "imagemagick", "ghostscript", "cairo", "tk", "qt", "pyqt", "pygobject", "wxpython", "nodejs", "make",
        "cmake", "c-compiler", "cxx-compiler", "fortran-compiler", "compilers", "pkg-config", "freetype", "qhull",
        "libpng", "zlib", "geos", "proj", "gdal", "libgdal", "eccodes", "texlive-core", "pandoc", "git")},
}
#: How long the file's packages are given, past the resolution they join (two loaded cores: xarray's ~30).
CONDA_SECONDS = 420.0
_DROPS = 12


def _requirement(spec: str) -> str:
    """One conda dependency line as a PyPI requirement ("" where it names nothing PyPI has)."""
    spec = spec.split("#", 1)[0].strip().strip("'\"")
    spec = spec.split("::", 1)[-1]  # a channel: conda-forge::name
    match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)(\[[\w,\s-]+\])?\s*(.*)", spec)
    if not match:
        return ""
    name, extras, rest = match.group(1), match.group(2) or "", match.group(3).strip()
    pypi = _PYPI_NAME.get(name.lower(), name)
    if pypi is None:
        return ""
    if "|" in rest:  # conda's "or": no single PyPI spelling, the newest that fits is taken
        rest = ""
    rest = re.sub(r"\s+", "", rest)
    if rest.startswith("=") and not rest.startswith("=="):  # name=1.2[=build]: the version as a prefix
        version = rest[1:].split("=", 1)[0]
        rest = f"=={version}" if version.endswith("*") or version.count(".") >= 2 else f"=={version}.*"
    elif rest and rest[0].isdigit():  # "name 1.2.*"
        rest = "==" + rest.split("=", 1)[0]
    elif rest.startswith("=="):
        rest = "==" + rest[2:].split("=", 1)[0]
    return f"{pypi}{extras}{rest}"


def conda_requirements(text: str) -> list[str]:
    """The PyPI requirements a conda environment file's `dependencies` name (its `pip:` list as written, less
    installs of the project itself)."""
    found: list[str] = []
    inside, pip_indent, top_indent = False, -1, -1
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if not inside:
            inside = line.strip() == "dependencies:" and indent == 0
            continue
        if indent == 0:
            break  # the next top-level key
        item = line.strip()
        if not item.startswith("-"):
            continue
        value = item[1:].strip()
        if top_indent < 0:
            top_indent = indent
        if value.rstrip(":").strip() == "pip" and value.endswith(":"):
            pip_indent = indent
            continue
        if pip_indent >= 0 and indent > pip_indent:
            if value and not value.startswith(("-e", "-r", "--", ".", "git+", "http")):
                found.append(value.strip("'\""))
            continue
        pip_indent = -1
        requirement = _requirement(value)
        if requirement:
            found.append(requirement)
    return list(dict.fromkeys(found))


def with_conda_packages(pinned: str, wanted: list[str], *, as_of: str, target: PythonSource | None,
                        log: Callable[[str], None], seconds: float = CONDA_SECONDS) -> str:
    """`pinned` (a resolution's text) with `wanted` resolved beside it, its own versions unchanged; each of
    `wanted` that cannot be had is left out and said, and past `seconds` the file's packages are left out."""
    from endstate.sandbox import resolve_requirements

    fixed = [line.split(" --hash", 1)[0].strip() for line in pinned.splitlines()
             if line.strip() and not line.startswith("#")]
    have = {requirement_name(line) for line in fixed}
    extra = [w for w in wanted if requirement_name(w) not in have]
    if not extra:
        return pinned
    deadline = time.monotonic() + seconds
    left: list[str] = []
    while extra:
        try:
            text = resolve_requirements(fixed + extra, as_of=as_of, undated=tuple(fixed), target=target,
                                        deadline=deadline)
        except ResolutionTimedOut:
            log(f"the conda file's packages did not resolve beside the rest in {seconds:.0f} s: the image is made "
                "without them")
            return pinned
        except SandboxUnavailable as exc:
            message = str(exc)
            named = {requirement_name(m) for m in re.findall(
                r"(?:No matching distribution found for|Could not find a version that satisfies the requirement)"
                r" ([A-Za-z0-9][A-Za-z0-9._-]*)", message)}
            culprits = [e for e in extra if requirement_name(e) in named] or \
                [e for e in extra if re.search(rf"(?<![\w.-]){re.escape(requirement_name(e))}(?![\w.-])",
                                               message.split("conflict is caused by", 1)[-1].lower())
                 and "conflict is caused by" in message]
            if not culprits or len(left) + len(culprits) > _DROPS:
                log(f"the conda file's packages do not resolve beside the rest ({message.split(' | ')[-1][:160]}): "
                    "the image is made without them")
                return pinned
            left += culprits
            extra = [e for e in extra if e not in culprits]
            continue
        taken = sorted({requirement_name(line) for line in text.splitlines() if line and not line.startswith("#")}
                       - have)
        log(f"the conda file's packages that PyPI has: {len(taken)} distribution(s) added beside the rest"
            + (f"; left out (no wheel, or no version that fits): {', '.join(left)}" if left else ""))
        return text
    log(f"none of the conda file's packages can be had from PyPI beside the rest: {', '.join(left)} left out")
    return pinned
