"""Wheels built from source-only releases, for a task's image.

A pin such as `blinker==1.4`, or a dependency's `wrapt<1.13` (1.12.1 is an sdist only), names a
release PyPI holds only as an sdist, and the task image installs wheels only, offline. `build_wheel`
downloads that sdist (the network is on while a task is made), builds it into a wheel, and keeps
the wheel under the sdist's own sha256 in the wheelhouse (`built/<sha256>/`), where
`endstate.sandbox`'s resolution finds it as it finds PyPI's: the same sdist is built once, and
every later image takes the same wheel, byte for byte.

For the sandbox's Python it is built on the host, and only a pure-Python wheel (`py3-none-any`) is
kept: one built against the host's interpreter or C library would not be the sandbox's. For another
Python's image (`endstate.sandbox.python_source`) it is built in that image, with that Python, so a
wheel tagged for it (`cp39-cp39-linux_x86_64`) is kept too: it was made where it runs.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from endstate.sandbox import PythonSource, built_root

__all__ = ["build_wheel"]

#: Builds take this time of day for every file they write (reproducible zips).
_EPOCH = "315532800"


def _pip(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "SOURCE_DATE_EPOCH": _EPOCH, "PYTHONHASHSEED": "0"}
    return subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet", *args],
                          capture_output=True, text=True, check=False, env=env, cwd=cwd)


def build_wheel(requirement: str, *, target: PythonSource | None = None) -> Path | None:
    """The wheel built from the sdist `requirement` resolves to (cached by the sdist's sha256 and, for
    another Python, that Python's image), or None where there is no sdist, it does not build, or it
    builds no wheel that Python takes."""
    with tempfile.TemporaryDirectory(prefix="endstate-sdist-") as tmp:
        done = _pip("download", "--no-deps", "--no-binary=:all:", "--dest", tmp, requirement)
        sdists = [p for p in Path(tmp).iterdir() if p.name.endswith((".tar.gz", ".zip", ".tar.bz2"))]
        if done.returncode != 0 or len(sdists) != 1:
            return None
        digest = hashlib.sha256(sdists[0].read_bytes()).hexdigest()[:32]
        home = built_root() / (digest if target is None else f"{digest}-{target.tag.split(':')[1].replace('.', '')}")
        if home.is_dir():
            return next(iter(sorted(home.glob("*.whl"))), None)
        staging = Path(tmp) / "wheel"
        wheels = _built_here(sdists[0], staging) if target is None else _built_in_image(sdists[0], staging, target)
        if len(wheels) != 1:
            return None
        home.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=digest + ".", dir=home.parent))
        shutil.copy2(wheels[0], partial / wheels[0].name)
        try:
            partial.rename(home)
        except OSError:  # built by another process meanwhile: the same sdist
            shutil.rmtree(partial, ignore_errors=True)
        return next(iter(sorted(home.glob("*.whl"))), None)


def _built_here(sdist: Path, staging: Path) -> list[Path]:
    done = _pip("wheel", "--no-deps", "--wheel-dir", str(staging), str(sdist))
    wheels = sorted(staging.glob("*-none-any.whl")) if done.returncode == 0 else []
    return [w for w in wheels if "py3" in w.name.rsplit("-", 3)[1]]


def _built_in_image(sdist: Path, staging: Path, target: PythonSource) -> list[Path]:
    """Build `sdist` with the Python of `target`'s image, keeping a pure wheel or one tagged for that Python."""
    from endstate.sandbox import build_wheel_in_image

    staging.mkdir()
    build_wheel_in_image(target, sdist, staging, environment={"SOURCE_DATE_EPOCH": _EPOCH})
    tag = "cp" + target.python.replace(".", "")
    return [w for w in sorted(staging.glob("*.whl")) if w.name.endswith("-none-any.whl") or f"-{tag}-" in w.name]
