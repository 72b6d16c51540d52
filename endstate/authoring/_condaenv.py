"""The packages of a conda environment file, where PyPI has them: SWE-bench's environment of xarray and of
matplotlib 3.5+ is `conda env update -f environment.yml` (conda-forge), then its pip pins.

A task's image installs wheels from PyPI only. `conda_requirements` reads the file's `dependencies` (and its
`pip:` list) as PyPI requirements: conda's `name=1.2` is `name==1.2.*`, a build string is dropped, a few
conda-forge names are PyPI's under another name (`dask-core`, `matplotlib-base`, `iris`), and what conda
ships that is no Python distribution on PyPI (`hdf5`, `gtk3`, compilers, the interpreter) is left out.
`with_conda_packages` adds them to a resolution that already holds: every version it chose stays as it
was, the file's packages are solved around them by uv as of the environment's day, and any of them that
cannot be had (no wheel for the image's Python, no version that fits) is left out and said. Tests that
need one skip as before; the rest run as they ran in SWE-bench's environment instead of skipping.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from endstate.authoring._versions import requirement_name
from endstate.errors import ResolutionTimedOut, SandboxUnavailable
from endstate.sandbox import PythonSource, built_root

__all__ = ["conda_requirements", "with_conda_packages", "broken_imports"]

#: conda-forge names that PyPI knows by another; None: conda ships it, PyPI has no wheel of it to offer
#: (system libraries, the interpreter, GUI toolkits built against them, programs).
_PYPI_NAME: dict[str, str | None] = {
    "dask-core": "dask", "matplotlib-base": "matplotlib", "iris": "scitools-iris", "pytables": "tables",
    "python-graphviz": "graphviz", "pseudonetcdf": "PseudoNetCDF",
    **{name: None for name in (
        "python", "pip", "hdf5", "libnetcdf", "netcdf-fortran", "cdms2", "pynio", "gtk3", "gtk4", "graphviz", "ffmpeg",
        "imagemagick", "ghostscript", "cairo", "tk", "qt", "pyqt", "pygobject", "wxpython", "nodejs", "make",
        "cmake", "c-compiler", "cxx-compiler", "fortran-compiler", "compilers", "pkg-config", "freetype", "qhull",
        "libpng", "zlib", "geos", "proj", "gdal", "libgdal", "eccodes", "texlive-core", "pandoc", "git",
        # PyPI's release imports only beside conda's library: cfgrib raises RuntimeError without ecCodes
        # (xarray's files name it in every version; `broken_imports` finds such a package, a build later)
        "cfgrib")},
}
#: How long the file's packages are given, past the resolution they join (xarray's: four solves of uv, ~90 s).
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
    inside, pip_indent = False, -1
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if not inside:
            inside = line.strip() == "dependencies:" and indent == 0
            continue
        item = line.strip()
        if indent == 0 and not item.startswith("-"):
            break  # the next top-level key (the list itself may sit at the key's indentation)
        if not item.startswith("-"):
            continue
        value = item[1:].strip()
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


def _uv() -> str | None:
    """uv's program: beside this Python's (the `swebench` extra installs it), else on PATH."""
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.is_file() else shutil.which("uv")


def _platform(glibc: tuple[int, int]) -> str:
    """uv's name of the newest manylinux platform the image's glibc runs."""
    minor = max((m for m in _MANYLINUX if m <= glibc[1]), default=17)
    return f"x86_64-manylinux_2_{minor}"


_MANYLINUX = (17, 28, *range(31, 41))


def _solve(uv: str, requirements: list[str], fixed: list[str], *, as_of: str, python: str, glibc: tuple[int, int],
           deadline: float) -> tuple[list[str] | None, str]:
    """uv's resolution of `requirements` as of `as_of` for the image's Python and glibc, wheels only ((exact pins,
    "") or (None, why not)). `fixed` are taken whatever their date, as pip's resolution took them."""
    from endstate.sandbox import DATED_INDEX

    exempt = [f"--exclude-newer-package={requirement_name(f)}=2100-01-01T00:00:00Z" for f in fixed]
    try:
        done = subprocess.run(
            [uv, "pip", "compile", "-", "--quiet", "--no-config", "--no-header", "--no-annotate",
             "--index-url", DATED_INDEX, "--exclude-newer", as_of or "2100-01-01T00:00:00Z", *exempt,
             "--python-version", python, "--python-platform", _platform(glibc), "--only-binary", ":all:"],
            input="\n".join(requirements) + "\n", capture_output=True, text=True,
            timeout=max(1.0, deadline - time.monotonic()), check=False)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    if done.returncode != 0:
        return None, done.stderr
    return [line.strip() for line in done.stdout.splitlines() if "==" in line and not line.startswith("#")], ""


def _solve_leaving_out(uv: str, fixed: list[str], extra: list[str], *, as_of: str, python: str,
                       glibc: tuple[int, int], deadline: float) -> tuple[list[str] | None, list[str], str]:
    """uv's solution of `extra` beside `fixed`, leaving out each of `extra` uv names as impossible (at most
    `_DROPS`): (its exact pins, what was left out, "") or (None, what was left out, why, as the log says it)."""
    left: list[str] = []
    while extra:
        chosen, why = _solve(uv, fixed + extra, fixed, as_of=as_of, python=python, glibc=glibc, deadline=deadline)
        if chosen is not None:
            return chosen, left, ""
        required = {requirement_name(m) for m in re.findall(r"you require ([A-Za-z0-9][A-Za-z0-9._-]*)", why)}
        culprits = [e for e in extra if requirement_name(e) in required]
        if not culprits or len(left) + len(culprits) > _DROPS:
            last = ([line.strip() for line in why.splitlines() if line.strip()] or ["no reason given"])[-1]
            return None, left, (f"the conda file's packages do not resolve beside the rest ({last[:200]}): the image "
                                "is made without them")
        left += culprits
        extra = [e for e in extra if e not in culprits]
    return None, left, f"none of the conda file's packages can be had from PyPI beside the rest: {', '.join(left)} left out"


def with_conda_packages(pinned: str, wanted: list[str], *, as_of: str, target: PythonSource | None,
                        log: Callable[[str], None], seconds: float = CONDA_SECONDS) -> str:
    """`pinned` (a resolution's text) with `wanted` resolved beside it, its own versions unchanged; each of
    `wanted` that no version of can be had beside them is left out and said. uv solves (pip's resolver
    backtracks for many minutes over aiobotocore's and boto3's botocore pins); pip then fetches the wheels of
    what uv chose, every version given."""
    from endstate.sandbox import SANDBOX_GLIBC, SANDBOX_PYTHON, resolve_requirements

    fixed = [line.split(" --hash", 1)[0].strip() for line in pinned.splitlines()
             if line.strip() and not line.startswith("#") and requirement_name(line) != "pip"]
    have = {requirement_name(line) for line in fixed} | {"pip"}
    extra = [w for w in wanted if requirement_name(w) not in have]
    if not extra:
        return pinned
    uv = _uv()
    if uv is None:
        log("the conda file's packages are left out: uv, which solves them beside the rest, is not installed "
            "(pip install 'endstate[swebench]')")
        return pinned
    python, glibc = (target.python, target.glibc) if target else (SANDBOX_PYTHON, SANDBOX_GLIBC)
    deadline = time.monotonic() + seconds
    solved = _solved_before(fixed, extra, as_of, python, glibc)
    if solved is not None:  # the records of one environment ask the same: uv's answer, as of a fixed day, is kept
        chosen, left = solved
        log("the conda file's packages as uv solved them beside the same resolution for an earlier record")
    else:
        answer, left, failed = _solve_leaving_out(uv, fixed, extra, as_of=as_of, python=python, glibc=glibc,
                                                  deadline=deadline)
        if answer is None:
            log(failed)
            return pinned
        chosen = answer
        _keep_solved(fixed, extra, as_of, python, glibc, chosen, left)
    try:
        text = resolve_requirements(chosen, as_of=as_of, undated=tuple(fixed), target=target, deadline=deadline)
    except (SandboxUnavailable, ResolutionTimedOut) as exc:
        log(f"the conda file's packages, as uv chose them, were not fetched ({str(exc).split(' | ')[-1][:200]}): "
            "the image is made without them")
        return pinned
    taken = sorted({requirement_name(line) for line in text.splitlines() if line and not line.startswith("#")}
                   - have)
    log(f"the conda file's packages that PyPI has: {len(taken)} distribution(s) added beside the rest"
        + (f"; left out (no wheel, or no version that fits): {', '.join(left)}" if left else ""))
    return text


def _solved_path(fixed: list[str], extra: list[str], as_of: str, python: str, glibc: tuple[int, int]) -> Path:
    asked = json.dumps([sorted(fixed), sorted(extra), as_of, python, list(glibc)]).encode()
    return built_root().parent / "conda-solves" / f"{hashlib.sha256(asked).hexdigest()[:32]}.json"


def _solved_before(fixed: list[str], extra: list[str], as_of: str, python: str,
                   glibc: tuple[int, int]) -> tuple[list[str], list[str]] | None:
    """(uv's choice, what it left out) for the same question asked before, if it was kept; only a dated question
    (`as_of`) has one answer."""
    if not as_of:
        return None
    try:
        kept = json.loads(_solved_path(fixed, extra, as_of, python, glibc).read_text(encoding="utf-8"))
        return [str(c) for c in kept["chosen"]], [str(c) for c in kept["left"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _keep_solved(fixed: list[str], extra: list[str], as_of: str, python: str, glibc: tuple[int, int],
                 chosen: list[str], left: list[str]) -> None:
    if not as_of:
        return
    path = _solved_path(fixed, extra, as_of, python, glibc)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}")
    partial.write_text(json.dumps({"chosen": chosen, "left": left}), encoding="utf-8")
    partial.replace(path)


#: Run in the task's image by its Python: each installed distribution named, its top-level modules imported;
#: those whose import raises something other than ImportError (what a test's skip helper takes) are printed.
_PROBE = """\
import importlib, json, sys
try:
    import importlib.metadata as metadata
except ImportError:
    print("{}"); sys.exit(0)
broken = {}
for name in sys.argv[1:]:
    try:
        dist = metadata.distribution(name)
    except Exception:
        continue
    tops = (dist.read_text("top_level.txt") or "").split()
    if not tops:
        tops = sorted({str(f).split("/")[0].split(".")[0] for f in dist.files or []
                       if str(f).endswith(".py") and not str(f).split("/")[0].endswith((".dist-info", ".data"))})
    for top in tops:
        if top.startswith("_") or not top.isidentifier():
            continue
        try:
            importlib.import_module(top)
        except ImportError:
            pass
        except BaseException as exc:
            broken[name] = (top + ": " + type(exc).__name__ + ": " + str(exc))[:200]
            break
print(json.dumps(broken))
"""


def broken_imports(folder: Path, names: list[str], backend: str, image: str,
                   log: Callable[[str], None]) -> dict[str, str]:
    """name -> why, for each of `names` installed in the task's image (built from `folder`) whose import raises
    something other than ImportError there: what a test's skip helper does not take for "not installed"."""
    import json

    from endstate.sandbox import open_sandbox
    from endstate.task import load_task, task_sandbox

    where = task_sandbox(load_task(folder), backend, image, log=log)
    with open_sandbox(backend, image=where.image, limits=where.limits, name_hint="imports") as box:
        done = box.exec(f"cd / && python3 -c {shlex.quote(_PROBE)} {' '.join(map(shlex.quote, names))} "
                        "2>/dev/null | tail -1", timeout=600)
    try:
        found = json.loads(done.stdout.strip() or "{}")
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}
