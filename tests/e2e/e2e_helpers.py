"""End-to-end runs of the real CLI, in subprocesses, against a real Docker engine."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "tasks"
CASSETTES = ROOT / "cassettes"


class Ran:
    def __init__(self, proc: subprocess.CompletedProcess) -> None:
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def __repr__(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.out[-4000:]}\n--- stderr\n{self.err[-4000:]}"


def endstate(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT, timeout: float = 1200) -> Ran:
    """Run `python -m endstate ARGS` and capture what it prints."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run([sys.executable, "-m", "endstate", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout)
    return Ran(proc)

