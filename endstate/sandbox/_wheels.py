"""Wheels for a task's dependencies: resolved and downloaded on the host, installed offline.

A task image that installs a project's dependencies is built with no network at all:
the host resolves the requirements for the sandbox's interpreter (`pip download`,
wheels only), pins each wheel by name, version and sha256 into the image folder's
`requirements.txt`, and keeps the wheels in a wheelhouse named by that file's own
sha256. The build context then carries the wheelhouse, and the Dockerfile runs pip
from its own wheel with `--no-index --require-hashes`.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from endstate.errors import SandboxUnavailable

__all__ = ["SANDBOX_PYTHON", "SYSTEM_PACKAGES", "built_root", "resolve_requirements", "wheelhouse", "wheelhouse_root"]

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
_TARGET = ["--only-binary=:all:", "--python-version", SANDBOX_PYTHON, "--implementation", "cp", "--abi",
           "cp" + SANDBOX_PYTHON.replace(".", ""), "--abi", "abi3", "--abi", "none",
           *[w for tag in PLATFORMS for w in ("--platform", tag)]]


def wheelhouse_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "endstate" / "wheelhouse"


def built_root() -> Path:
    """Wheels endstate built from sdists (`endstate.authoring._sdists`), one folder per sdist."""
    return wheelhouse_root().parent / "built"


def _pip(args: list[str], what: str) -> None:
    built = [a for d in sorted(built_root().glob("*")) if d.is_dir() and "." not in d.name
             for a in ("--find-links", str(d))]
    done = subprocess.run([sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--quiet",
                           *_TARGET, *built, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        raise SandboxUnavailable(f"{what} failed: {tail or 'pip said nothing'}. The task image needs every "
                                 f"dependency as a wheel for Python {SANDBOX_PYTHON}; give the task an image "
                                 "of your own (--dockerfile) where one has none")


def _wheel_name(filename: str) -> tuple[str, str]:
    name, version = filename.split("-")[:2]
    return re.sub(r"[-_.]+", "-", name).lower(), version


#: Where upload times are read to resolve as of a date (PEP 700's `upload-time`, which PyPI serves).
DATED_INDEX = "https://pypi.org/simple"


def resolve_requirements(requirements: list[str], *, as_of: str = "", undated: tuple[str, ...] = ()) -> str:
    """The text of a pinned requirements file (name==version --hash=sha256:...) for `requirements`
    and everything they need, plus pip itself (the build runs it from its wheel). The wheels
    are left in the wheelhouse of that text.

    `as_of` (ISO 8601): only files uploaded before then, as the project's own resolution saw them
    that day. pip takes a file with no upload time whatever the date, so this asks PyPI alone
    (`--isolated`: no configured mirror, extra index or find-links, which give none). pip itself
    and `undated` (exact pins, without their dependencies) are fetched first, whatever their date,
    and offered beside it: the build needs a pip that runs on the sandbox's Python."""
    with tempfile.TemporaryDirectory(prefix="endstate-resolve-") as tmp, \
            tempfile.TemporaryDirectory(prefix="endstate-undated-") as links:
        dated = []
        if as_of:
            _pip(["--no-deps", "--dest", links, "pip", *undated], f"downloading pip {' '.join(undated)}")
            dated = ["--isolated", "--index-url", DATED_INDEX, "--uploaded-prior-to", as_of, "--find-links", links]
        _pip([*dated, "--dest", tmp, "pip", *requirements],
             f"resolving {', '.join(requirements)}{f' as of {as_of}' if as_of else ''}")
        lines = []
        for wheel in sorted(Path(tmp).glob("*.whl")):
            name, version = _wheel_name(wheel.name)
            lines.append(f"{name}=={version} --hash=sha256:{hashlib.sha256(wheel.read_bytes()).hexdigest()}")
        text = "\n".join(sorted(lines)) + "\n"
        house = _house_of(text)
        if not house.exists():
            _fill(house, Path(tmp))
    return text


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
             f"downloading the wheels {requirements_txt} names")
        _fill(house, Path(tmp))
    return house
