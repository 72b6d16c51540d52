"""Shared bits of the benchmark scripts: run the CLI, time it, read what it wrote."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(*args: str) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "endstate", *args], cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"endstate {' '.join(args)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return elapsed, proc


def sandbox_share(*result_dirs: Path) -> tuple[float, float]:
    """(seconds inside sandbox calls, summed task wall seconds) over results.json files below the dirs."""
    inside = wall = 0.0
    for folder in result_dirs:
        for path in Path(folder).rglob("results.json"):
            for task in json.loads(path.read_text())["tasks"]:
                inside += task["sandbox_s"]
                wall += task["wall_s"]
    return inside, wall
