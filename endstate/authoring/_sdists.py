"""Wheels built from source-only releases, for a task's image.

A pin such as `blinker==1.4` names a release PyPI holds only as an sdist, and the task image
installs wheels only, offline. `build_wheel` downloads that sdist (the network is on while a task
is made), builds it into a wheel on the host, and keeps the wheel under the sdist's own sha256
in the wheelhouse (`built/<sha256>/`), where `endstate.sandbox`'s resolution finds it as it finds
PyPI's: the same sdist is built once, and every later image takes the same wheel, byte for byte.
Only a pure-Python wheel (`py3-none-any`) is kept: one built against the host's interpreter or C
library would not be the sandbox's.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from endstate.sandbox import built_root

__all__ = ["build_wheel"]

#: Builds take this time of day for every file they write (reproducible zips).
_EPOCH = "315532800"


def _pip(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "SOURCE_DATE_EPOCH": _EPOCH, "PYTHONHASHSEED": "0"}
    return subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet", *args],
                          capture_output=True, text=True, check=False, env=env, cwd=cwd)


def build_wheel(requirement: str) -> Path | None:
    """The pure-Python wheel built from the sdist `requirement` resolves to (cached by the sdist's
    sha256), or None where there is no sdist, it does not build, or it builds no pure wheel."""
    with tempfile.TemporaryDirectory(prefix="endstate-sdist-") as tmp:
        done = _pip("download", "--no-deps", "--no-binary=:all:", "--dest", tmp, requirement)
        sdists = [p for p in Path(tmp).iterdir() if p.name.endswith((".tar.gz", ".zip", ".tar.bz2"))]
        if done.returncode != 0 or len(sdists) != 1:
            return None
        digest = hashlib.sha256(sdists[0].read_bytes()).hexdigest()[:32]
        home = built_root() / digest
        if home.is_dir():
            return next(iter(sorted(home.glob("*.whl"))), None)
        staging = Path(tmp) / "wheel"
        done = _pip("wheel", "--no-deps", "--wheel-dir", str(staging), str(sdists[0]))
        wheels = sorted(staging.glob("*-none-any.whl")) if done.returncode == 0 else []
        if len(wheels) != 1 or "py3" not in wheels[0].name.rsplit("-", 3)[1]:
            return None
        home.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=digest + ".", dir=home.parent))
        shutil.copy2(wheels[0], partial / wheels[0].name)
        try:
            partial.rename(home)
        except OSError:  # built by another process meanwhile: the same sdist
            shutil.rmtree(partial, ignore_errors=True)
        return next(iter(sorted(home.glob("*.whl"))), None)
