"""The image of the Python a task names, wherever it can be had, and never silently another.

A task imported from SWE-bench runs on the Python its specification names (3.5 to 3.11). Its
image is built `FROM endstate-python:<X.Y>-<source>`, an image whose `python3` and `python` are
that Python; the harness runs on it too (its in-container pieces keep to what 3.6 has). The
sources, in order:

- the official `python:X.Y` image, from a registry the user names (`registry`, else the environment's
  `ENDSTATE_PYTHON_REGISTRY`: a prefix such as `docker.io/library` or `localhost:5000/library`; an
  image of that name the engine already has is taken as is);
- a Debian suite that ships it (`SUITES`: bullseye 3.9, bookworm 3.11, trixie 3.13), its base
  seeded from Debian's packages where no registry answers, as the sandbox's base is;
- an interpreter the host already has (pyenv's under ~/.pyenv/versions, uv's under
  ~/.local/share/uv/python), copied into a Debian bookworm base with the libraries its extension
  modules link against (read with `ldd`);
- where none serves it, the nearest newer Python that one does: `PythonSource.deviation` says
  so, in the import's log and in the task's task.toml.

The tag names the source (`endstate-python:3.9-bullseye`), so the image a task is checked in is
the one it was made for; `endstate.sandbox.build_python_image` builds it (not again while its context
is unchanged).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec

from endstate.errors import SandboxUnavailable

__all__ = ["PYTHON_IMAGE", "SUITES", "PythonSource", "base_of", "host_interpreters", "pip_for", "python_source",
           "source_of_tag", "write_context"]

PYTHON_IMAGE = "endstate-python"
#: The registry prefix of the official python:X.Y images, when the user has one (`docker.io/library`).
REGISTRY_VARIABLE = "ENDSTATE_PYTHON_REGISTRY"
#: Debian suites and the python3 each ships.
SUITES = {"3.9": "bullseye", "3.11": "bookworm", "3.13": "trixie"}
#: The glibc of each suite: a wheel for it or an older glibc runs there.
GLIBC = {"bullseye": (2, 31), "bookworm": (2, 36), "trixie": (2, 41)}
#: The official python:X.Y images of old Pythons are on Debian buster: wheels are taken for its glibc.
REGISTRY_GLIBC = (2, 28)
#: Every Python a specification may name, oldest first: the nearest newer is looked for among them.
PYTHONS = tuple(f"3.{minor}" for minor in range(5, 14))
#: Libraries of glibc itself, which every Debian base has in its own version.
_GLIBC_LIBS = re.compile(r"(ld-linux|libc|libm|libpthread|libdl|librt|libutil|libresolv|libmvec)[.-]")
#: Parts of an interpreter's tree no test needs: its own test suite, Tk, IDLE, the static library.
_LEFT_OUT = {"test", "tests", "idlelib", "tkinter", "turtledemo", "site-packages"}


class PythonSource(msgspec.Struct, frozen=True):
    """Where the image of a Python comes from. `wanted`: the Python the task names; `python`: the one
    the image carries (another only where none serves `wanted`)."""

    wanted: str
    python: str
    kind: str  # "registry", "debian" or "host"
    origin: str  # the image name, the suite, or the interpreter's folder
    glibc: tuple[int, int]

    @property
    def tag(self) -> str:
        label = {"registry": "registry", "debian": self.origin, "host": "host"}[self.kind]
        return f"{PYTHON_IMAGE}:{self.python}-{label}"

    def said(self) -> str:
        where = {"registry": f"the image {self.origin}", "debian": f"Debian {self.origin}",
                 "host": f"the host's {self.origin}"}[self.kind]
        return f"Python {self.python} from {where}"

    @property
    def deviation(self) -> str:
        """"" when the image carries the Python the task names; else the sentence that says it does not."""
        if self.wanted == self.python:
            return ""
        return (f"Python {self.wanted} is named, but no source here serves it (no registry image, no Debian suite, "
                f"no interpreter of the host's): Python {self.python} instead, the nearest newer")


def host_interpreters(home: Path | None = None) -> dict[str, Path]:
    """X.Y -> the folder of the newest CPython install of that version the host has (pyenv's, else uv's)."""
    home = Path(home or os.path.expanduser("~"))
    pyenv = Path(os.environ.get("PYENV_ROOT") or home / ".pyenv") / "versions"
    uv = Path(os.environ.get("UV_PYTHON_INSTALL_DIR") or home / ".local" / "share" / "uv" / "python")
    found: dict[str, tuple[tuple[int, ...], Path]] = {}
    candidates = [(p, p.name) for p in sorted(pyenv.glob("3.*"))]
    candidates += [(p, p.name.split("-")[1]) for p in sorted(uv.glob("cpython-3.*-linux-x86_64-gnu"))]
    for folder, version in candidates:
        match = re.fullmatch(r"(3\.\d+)\.(\d+)", version)
        if not match or not (folder / "bin" / "python3").exists():
            continue
        key = tuple(int(n) for n in version.split("."))
        if match.group(1) not in found or key > found[match.group(1)][0]:
            found[match.group(1)] = (key, folder)
    return {version: folder for version, (_, folder) in found.items()}


def pip_for(python: str, scratch: Path, *, hosted: dict[str, Path] | None = None) -> tuple[list[str], dict[str, str]]:
    """(the command that runs the host's pip, its environment) so that it reads environment markers as Python
    `python` does: under the host's interpreter of that version, where there is one pip runs under, with the
    running pip package alone on its PYTHONPATH (a link in `scratch`). pip evaluates a requirement's markers
    for the Python it runs on, whatever `--python-version` says: resolved on the host's 3.11 for a 3.10 image,
    pandas 1.5.3's `numpy>=1.23.2; python_version >= "3.11"` refuses the specification's numpy==1.23.0. Elsewhere
    the host's own Python (the markers then are its own; what they leave out is added after: `_wheels`), and
    below the Python the host's pip runs under (its Requires-Python)."""
    from importlib import metadata

    import pip
    from packaging.specifiers import SpecifierSet

    hosted = host_interpreters() if hosted is None else hosted
    own = [sys.executable, "-m", "pip"], dict(os.environ)
    folder = hosted.get(python)
    if folder is None or f"{sys.version_info[0]}.{sys.version_info[1]}" == python:
        return own
    quiet = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    if f"{python}.0" not in SpecifierSet(metadata.metadata("pip")["Requires-Python"] or ""):  # pip 26.3: >=3.10
        wheel = _pip_wheel(python)  # the newest pip that runs under it, run from its wheel
        return ([str(folder / "bin" / "python3"), str(wheel / "pip")], quiet) if wheel else own
    link = scratch / "pip"
    if not link.exists():
        link.symlink_to(Path(pip.__file__).parent, target_is_directory=True)
    return [str(folder / "bin" / "python3"), "-m", "pip"], {**quiet, "PYTHONPATH": str(scratch)}


#: pip 26.0 is the first with --uploaded-prior-to, which a resolution as of a day needs.
_PIP_WITH_DATES = "pip>=26"


def _pip_wheel(python: str) -> Path | None:
    """The wheel of the newest pip (26 on) that runs under Python `python`, downloaded once and kept; None
    where none does or PyPI is out of reach."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "endstate" / "pip-for" / python
    found = sorted(base.glob("pip-*.whl"))
    if not found:
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                               "--no-deps", "--only-binary=:all:", "--python-version", python, "--dest", str(base),
                               _PIP_WITH_DATES], capture_output=True, text=True, check=False)
        found = sorted(base.glob("pip-*.whl")) if done.returncode == 0 else []
    return found[-1] if found else None


def python_source(version: str, *, registry: str | None = None, hosted: dict[str, Path] | None = None) -> PythonSource:
    """Where the image of Python `version` ("3.9") comes from: the first source that serves it, else the
    nearest newer Python one serves (the result's `deviation` says so). SandboxUnavailable when no
    source serves it or any newer one."""
    hosted = host_interpreters() if hosted is None else hosted
    registry = os.environ.get(REGISTRY_VARIABLE, "") if registry is None else registry
    if version not in PYTHONS:
        raise SandboxUnavailable(f"Python {version} is not one endstate knows ({PYTHONS[0]} to {PYTHONS[-1]})")
    for python in PYTHONS[PYTHONS.index(version):]:
        if registry:
            return PythonSource(version, python, "registry", f"{registry.rstrip('/')}/python:{python}", REGISTRY_GLIBC)
        if python in SUITES:
            return PythonSource(version, python, "debian", SUITES[python], GLIBC[SUITES[python]])
        if python in hosted:
            return PythonSource(version, python, "host", str(hosted[python]), GLIBC["bookworm"])
    raise SandboxUnavailable(f"no source here serves Python {version} or a newer one: pass a registry that has "
                             f"python:{version} images, or install it with pyenv or uv")


def source_of_tag(tag: str, *, registry: str | None = None) -> PythonSource:
    """The source an `endstate-python:X.Y-<source>` tag was made from (a task's FROM line)."""
    match = re.fullmatch(rf"{PYTHON_IMAGE}:(3\.\d+)-([a-z]+)", tag)
    if not match:
        raise SandboxUnavailable(f"{tag} is not an image of endstate's Pythons ({PYTHON_IMAGE}:X.Y-SOURCE)")
    python, label = match.groups()
    if label == "registry":
        registry = os.environ.get(REGISTRY_VARIABLE, "") if registry is None else registry
        return PythonSource(python, python, "registry", f"{(registry or 'docker.io/library').rstrip('/')}/python:"
                            f"{python}", REGISTRY_GLIBC)
    if label == "host":
        folder = host_interpreters().get(python)
        if folder is None:
            raise SandboxUnavailable(f"{tag} copies the host's Python {python}, which this host does not have: "
                                     f"install it (`pyenv install {python}` or `uv python install {python}`)")
        return PythonSource(python, python, "host", str(folder), GLIBC["bookworm"])
    if SUITES.get(python) != label:
        raise SandboxUnavailable(f"{tag}: Debian {label} does not ship Python {python}")
    return PythonSource(python, python, "debian", label, GLIBC[label])


_DOCKERFILE = """\
# {said}, for a task's image: python3 and python are this Python, and the harness runs on it.
FROM {base}
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC PYTHONHASHSEED=0 PYTHONDONTWRITEBYTECODE=1 \\
    PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
{steps}RUN (id -u agent >/dev/null 2>&1 || useradd --create-home --uid 1000 --shell /bin/bash agent) \\
 && mkdir -p /workspace && chown agent:agent /workspace \\
 && python3 -c "import sys; assert sys.version_info[:2] == ({major}, {minor}), sys.version" \\
 && python -c "import sys; assert sys.version_info[:2] == ({major}, {minor}), sys.version"
WORKDIR /workspace
"""
_APT = ("RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends {packages} procps git ca-certificates"
        " \\\n && rm -rf /var/lib/apt/lists/*\n")
#: Debian's packages of its python3, per suite (bullseye's pip needs distutils, a package of its own there).
_DEBIAN_PYTHON = {"bullseye": "python3 python3-distutils python-is-python3", "bookworm": "python3 python-is-python3",
                  "trixie": "python3 python-is-python3"}
_HOST = ("COPY python/ /usr/local/\nCOPY lib/ /usr/local/lib/endstate-python-libs/\n"
         "RUN echo /usr/local/lib/endstate-python-libs > /etc/ld.so.conf.d/zz-endstate-python.conf && ldconfig \\\n"
         " && ln -sf python3 /usr/local/bin/python\n")


def base_of(source: PythonSource) -> str:
    """The image the image of `source` is built from."""
    return {"registry": source.origin, "debian": f"debian:{source.origin}-slim",
            "host": "debian:bookworm-slim"}[source.kind]


def write_context(source: PythonSource, context: Path) -> None:
    """The build context of the image of `source`: its Dockerfile and, for the host's interpreter, the
    interpreter's tree (python/) and the libraries it links against (lib/)."""
    steps = ""
    if source.kind == "debian":
        steps = _APT.format(packages=_DEBIAN_PYTHON[source.origin])
    elif source.kind == "host":
        _copy_interpreter(Path(source.origin), context / "python", context / "lib")
        steps = _HOST + _APT.format(packages="")
    major, minor = source.python.split(".")
    (context / "Dockerfile").write_text(_DOCKERFILE.format(said=source.said(), base=base_of(source), steps=steps,
                                                           major=major, minor=minor), encoding="utf-8")


def _copy_interpreter(folder: Path, tree: Path, libs: Path) -> None:
    def left_out(where: str, names: list[str]) -> list[str]:
        gone = [n for n in names if n in _LEFT_OUT or n.startswith("_tkinter") or n.endswith(".a")]
        if Path(where) == folder / "bin":  # the interpreter only: other scripts name the host's path
            gone += [n for n in names if not re.fullmatch(r"python3?(\.\d+)?m?", n)]
        return gone

    shutil.copytree(folder, tree, symlinks=True, ignore=left_out)
    libs.mkdir()
    linked = [folder / "bin" / "python3", *folder.glob("lib/libpython3*.so*"),
              *folder.glob("lib/python3*/lib-dynload/*.so")]
    for path in (p for p in linked if not p.name.startswith("_tkinter")):
        done = subprocess.run(["ldd", str(path)], capture_output=True, text=True, check=False)
        for name, target in re.findall(r"^\s*(\S+) => (/\S+)", done.stdout, flags=re.MULTILINE):
            if not _GLIBC_LIBS.match(name) and not name.startswith("libpython") and not (libs / name).exists():
                shutil.copyfile(Path(target).resolve(), libs / name)
