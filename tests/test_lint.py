"""ruff's pyflakes rules hold over the package, the tests and the benchmarks (configured in pyproject)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _ruff() -> list[str]:
    beside = Path(sys.executable).with_name("ruff")
    found = str(beside) if beside.is_file() else shutil.which("ruff")
    assert found, "ruff is in the test extra: install with `make setup`"
    return [found]


def test_ruff_finds_nothing():
    done = subprocess.run([*_ruff(), "check", "--no-cache", "--output-format", "concise", "endstate", "tests", "bench"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_sees_an_unused_import(tmp_path):
    (tmp_path / "m.py").write_text("import json\n")
    done = subprocess.run([*_ruff(), "check", "--no-cache", "--isolated", "--select", "F", str(tmp_path / "m.py")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "F401" in done.stdout
