"""Wheels for a task's dependencies: resolved and downloaded on the host, installed offline.

A task image that installs a project's dependencies is built with no network at all:
the host resolves the requirements for the sandbox's interpreter (`pip download`,
wheels only), pins each wheel by name, version and sha256 into the image folder's
`requirements.txt`, and keeps the wheels in a wheelhouse named by that file's own
sha256. The build context then carries the wheelhouse, and the Dockerfile runs pip
from its own wheel with `--no-index --require-hashes`.
"""

from __future__ import annotations

import contextlib
import email.parser
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path

from endstate.errors import ResolutionTimedOut, SandboxUnavailable
from endstate.sandbox._base import DEFAULT_IMAGE
from endstate.sandbox._pythons import PythonSource, pip_for

__all__ = ["SANDBOX_PYTHON", "SYSTEM_PACKAGES", "built_root", "has_wheel", "python_of", "resolve_requirements",
           "wheelhouse", "wheelhouse_root"]

#: The interpreter of endstate's sandbox image (Debian bookworm's python3).
SANDBOX_PYTHON = "3.11"
#: Beside a task image's Dockerfile: Debian packages its build installs from Debian's mirrors, the one
#: step of such a build that has the host's network (the wheels stay offline, pinned by sha256).
SYSTEM_PACKAGES = "system-packages.txt"
#: The glibc of the sandbox's Debian bookworm: a wheel built for it or any older glibc runs there.
SANDBOX_GLIBC = (2, 36)
#: Every platform tag such a wheel may carry. pip takes only the tags it is given (it widens
#: manylinux2014 to 2010 and 1, nothing else), so each glibc from the sandbox's down is named:
#: a manylinux_2_28 wheel (the common tag since 2023) is as good as a 2_17 one.
PLATFORMS = (*[f"manylinux_2_{minor}_x86_64" for minor in range(SANDBOX_GLIBC[1], 4, -1)],
             "manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64", "linux_x86_64")
#: The first line of a pinned requirements file whose wheels are for another Python than the sandbox's
#: and its image (`# python 3.9, glibc 2.31, image endstate-python:3.9-bullseye`): pip takes it for a
#: comment, `wheelhouse` reads which wheels it names, the task's Dockerfile which image it is built from.
_FOR = re.compile(r"# python (3\.\d+), glibc 2\.(\d+), image (\S+)\n")


def _platforms(glibc: tuple[int, int]) -> tuple[str, ...]:
    if glibc == SANDBOX_GLIBC:
        return PLATFORMS
    return (*[f"manylinux_2_{minor}_x86_64" for minor in range(glibc[1], 4, -1)], *PLATFORMS[-4:])


def _target(python: str, glibc: tuple[int, int]) -> list[str]:
    """pip's options that take the wheels of CPython `python` on a Linux of `glibc`, not the host's."""
    return ["--only-binary=:all:", "--python-version", python, "--implementation", "cp", "--abi",
            "cp" + python.replace(".", "") + ("m" if python in ("3.5", "3.6", "3.7") else ""), "--abi", "abi3",
            "--abi", "none", *[w for tag in _platforms(glibc) for w in ("--platform", tag)]]


def python_of(text: str) -> tuple[str, tuple[int, int], str]:
    """The Python, glibc and image a pinned requirements text is for (the sandbox's, unless its first line
    names another)."""
    match = _FOR.match(text)
    if not match:
        return SANDBOX_PYTHON, SANDBOX_GLIBC, DEFAULT_IMAGE
    return match.group(1), (2, int(match.group(2))), match.group(3)


def wheelhouse_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "endstate" / "wheelhouse"


def built_root() -> Path:
    """Wheels endstate built from sdists (`endstate.authoring._sdists`), one folder per sdist."""
    return wheelhouse_root().parent / "built"


def _pip(args: list[str], what: str, python: str = SANDBOX_PYTHON, glibc: tuple[int, int] = SANDBOX_GLIBC,
         deadline: float | None = None) -> None:
    """`pip download` of `args` for that Python; `deadline` (time.monotonic()): stopped then, ResolutionTimedOut."""
    built = [a for d in sorted(built_root().glob("*")) if d.is_dir() and "." not in d.name
             for a in ("--find-links", str(d))]
    with tempfile.TemporaryDirectory(prefix="endstate-pip-") as scratch:
        pip, env = pip_for(python, Path(scratch))  # under that Python where the host has it: its markers
        try:
            done = subprocess.run([*pip, "download", "--disable-pip-version-check", "--progress-bar=off",
                                   *_target(python, glibc), *built, *args], capture_output=True, text=True,
                                  check=False, env=env,
                                  timeout=None if deadline is None else max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            raise ResolutionTimedOut(f"{what} was stopped, unfinished") from None
    if done.returncode != 0:
        # What a conflict is caused by (`astroid 2.6.6 depends on wrapt<1.13 and >=1.11`: said on stdout), then
        # pip's last words.
        # pip's list of versions "that require a different python version" (hundreds of them) says nothing of the
        # cause and would bury it: left out, and its warnings (an extra index it cannot read) where it says errors.
        causes = [line.strip() for line in done.stdout.splitlines() if " depends on " in line][:3]
        said = [line for line in done.stderr.strip().splitlines() if not line.startswith(_IGNORED)]
        said = [line for line in said if line.startswith("ERROR:")] or said
        tail = " | ".join(causes + said[-3:])
        raise SandboxUnavailable(f"{what} failed: {tail or 'pip said nothing'}. The task image needs every "
                                 f"dependency as a wheel for Python {python}; give the task an image "
                                 "of your own (--dockerfile) where one has none")


_IGNORED = "ERROR: Ignored the following versions that require a different python version"


def _wheel_name(filename: str) -> tuple[str, str]:
    name, version = filename.split("-")[:2]
    return re.sub(r"[-_.]+", "-", name).lower(), version


#: How many times a resolution for another Python is run again with what its markers left out.
_ROUNDS = 4


def _left_out(wheels: Path, python: str) -> list[str]:
    """What the downloaded wheels require on Python `python` and pip left out: pip evaluates environment
    markers (`exceptiongroup; python_version < "3.11"`) for the Python it runs on, the host's, whatever
    `--python-version` says (that sets the wheels' tags and Requires-Python only). Requirements of an
    extra are not read (no extra is asked for below the top)."""
    from packaging.requirements import InvalidRequirement, Requirement

    environment = {"python_version": python, "python_full_version": f"{python}.0", "extra": ""}
    have = {_wheel_name(wheel.name)[0] for wheel in wheels.glob("*.whl")}
    missing = set()
    for wheel in sorted(wheels.glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            metadata = next((n for n in archive.namelist() if n.endswith(".dist-info/METADATA")), None)
            text = archive.read(metadata).decode("utf-8", errors="replace") if metadata else ""
        for line in email.parser.Parser().parsestr(text).get_all("Requires-Dist") or []:
            try:
                requirement = Requirement(line)
            except InvalidRequirement:
                continue
            name = re.sub(r"[-_.]+", "-", requirement.name).lower()
            marker = requirement.marker
            if marker is not None and "extra" not in str(marker) and marker.evaluate(environment) and name not in have:
                missing.add(f"{requirement.name}{requirement.specifier}")
    return sorted(missing)


def _markers_read(requirements: list[str], python: str) -> list[str]:
    """`requirements` with their environment markers read as Python `python` reads them: one whose marker is
    false there left out, the marker of the rest dropped. pip reads them for the Python it runs under, which
    is the host's where no pip that has --uploaded-prior-to runs under `python` (3.8 and older): Django 4.0's
    `backports.zoneinfo; python_version<"3.9"`, read on 3.11, left the image of its Python 3.8 without it."""
    from packaging.requirements import InvalidRequirement, Requirement

    environment = {"python_version": python, "python_full_version": f"{python}.0", "extra": ""}
    kept = []
    for line in requirements:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            kept.append(line)
            continue
        if requirement.marker is not None and not requirement.marker.evaluate(environment):
            continue
        requirement.marker = None
        kept.append(str(requirement))
    return kept


#: Where upload times are read to resolve as of a date (PEP 700's `upload-time`, which PyPI serves).
DATED_INDEX = "https://pypi.org/simple"


def has_wheel(requirement: str, *, target: PythonSource | None = None) -> bool:
    """Whether PyPI holds a wheel of `requirement` (any version it allows, of any day) for the sandbox's Python,
    or `target`'s: False for a distribution released as sdists only (pywatchman), which no day resolves."""
    python, glibc = (target.python, target.glibc) if target else (SANDBOX_PYTHON, SANDBOX_GLIBC)
    asked = _markers_read([requirement], python) if target else [requirement]
    with tempfile.TemporaryDirectory(prefix="endstate-wheel-") as tmp:
        try:
            _pip(["--no-deps", "--dest", tmp, *asked], f"looking for a wheel of {requirement}", python, glibc)
        except SandboxUnavailable:
            return False
    return True


def resolve_requirements(requirements: list[str], *, as_of: str = "", undated: tuple[str, ...] = (),
                         target: PythonSource | None = None, deadline: float | None = None) -> str:
    """The text of a pinned requirements file (name==version --hash=sha256:...) for `requirements`
    and everything they need, plus pip itself (the build runs it from its wheel). The wheels
    are left in the wheelhouse of that text.

    `as_of` (ISO 8601): only files uploaded before then, as the project's own resolution saw them
    that day. pip takes a file with no upload time whatever the date, so this asks PyPI alone
    (`--isolated`: no configured mirror, extra index or find-links, which give none). pip itself
    and `undated` (exact pins, without their dependencies) are fetched first, whatever their date,
    and offered beside it: the build needs a pip that runs on the sandbox's Python. A pin of `undated`
    that has no distribution for this Python (the harness's pytest 7.4 on Python 3.6) is not offered:
    where the resolution needs it, pip names it there.
    `target`: the wheels are those of another Python's image (`endstate.sandbox._pythons`), which the
    text's first line names. `deadline` (time.monotonic()): pip is stopped then, ResolutionTimedOut."""
    python, glibc = (target.python, target.glibc) if target else (SANDBOX_PYTHON, SANDBOX_GLIBC)
    with tempfile.TemporaryDirectory(prefix="endstate-resolve-") as tmp, \
            tempfile.TemporaryDirectory(prefix="endstate-undated-") as links:
        dated = []
        if as_of:
            try:
                _pip(["--no-deps", "--dest", links, "pip", *undated], f"downloading pip {' '.join(undated)}", python,
                     glibc, deadline)
            except SandboxUnavailable:  # one at a time: those this Python has are offered
                _pip(["--no-deps", "--dest", links, "pip"], "downloading pip", python, glibc, deadline)
                for pin in undated:
                    with contextlib.suppress(SandboxUnavailable):
                        _pip(["--no-deps", "--dest", links, pin], f"downloading {pin}", python, glibc, deadline)
            dated = ["--isolated", "--index-url", DATED_INDEX, "--uploaded-prior-to", as_of, "--find-links", links]
        asked = ["pip", *(_markers_read(requirements, python) if target else requirements)]
        for _ in range(_ROUNDS):
            shutil.rmtree(tmp)
            _pip([*dated, "--dest", tmp, *asked],
                 f"resolving {_listed(requirements)}{f' as of {as_of}' if as_of else ''}", python, glibc, deadline)
            missing = _left_out(Path(tmp), python) if target else []
            if not missing:
                break
            asked += missing
        lines = []
        for wheel in sorted(Path(tmp).glob("*.whl")):
            name, version = _wheel_name(wheel.name)
            lines.append(f"{name}=={version} --hash=sha256:{hashlib.sha256(wheel.read_bytes()).hexdigest()}")
        text = "\n".join(sorted(lines)) + "\n"
        if target is not None:
            text = f"# python {python}, glibc 2.{glibc[1]}, image {target.tag}\n" + text
        house = _house_of(text)
        if not house.exists():
            _fill(house, Path(tmp))
    return text


def _listed(requirements: list[str], most: int = 8) -> str:
    """The requirements a resolution was asked for, as its failure names them: a long list (astropy 1.3's
    environment: 60) is cut, so that what pip said of the cause is read."""
    shown = ", ".join(requirements[:most])
    return shown if len(requirements) <= most else f"{shown} and {len(requirements) - most} more"


def _house_of(text: str) -> Path:
    return wheelhouse_root() / hashlib.sha256(text.encode()).hexdigest()[:32]


def _fill(house: Path, wheels: Path) -> None:
    staging = Path(tempfile.mkdtemp(prefix=house.name + ".", dir=_made(house.parent)))
    for wheel in wheels.glob("*.whl"):
        shutil.copy2(wheel, staging / wheel.name)
    try:
        staging.rename(house)
    except OSError:  # another process filled it first: the same wheels, by their hashes
        shutil.rmtree(staging, ignore_errors=True)


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def wheelhouse(requirements_txt: Path) -> Path:
    """The folder of wheels a pinned requirements file names, downloaded once and kept under
    the file's sha256 (only wheels whose hashes match are taken)."""
    text = Path(requirements_txt).read_text(encoding="utf-8")
    house = _house_of(text)
    if house.exists():
        return house
    with tempfile.TemporaryDirectory(prefix="endstate-wheels-") as tmp:
        _pip(["--no-deps", "--require-hashes", "--dest", tmp, "-r", str(requirements_txt)],
             f"downloading the wheels {requirements_txt} names", *python_of(text)[:2])
        _fill(house, Path(tmp))
    return house
