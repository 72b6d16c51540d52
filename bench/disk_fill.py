"""Peak memory of the harness while an agent tries to fill the disk.

The scripted agent writes 2 GiB into /tmp, 2 GiB into one workspace file and
3 GiB more into the workspace (see tests/e2e/e2e_helpers.py). The run is the
real CLI in a child process. Its agent workers are forked by a fork server that
the CLI never waits for, so the kernel's ru_maxrss of our children misses them:
every 20 ms this script reads the peak (VmHWM) and current (VmRSS) resident size
of every process descended from the CLI, and prints the CLI's own peak, the
largest peak of any one process, and the largest sum at one moment.
Target: under 500 MB.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from e2e_helpers import disk_fill_suite  # noqa: E402

TARGET_MB = 500


def _tree(root: int) -> dict[int, tuple[int, int]]:
    """(VmHWM, VmRSS) in KiB of `root` and every process descended from it."""
    parents, sizes = {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        parents[int(entry.name)] = int(fields["PPid"])
        if "VmHWM" in fields:
            sizes[int(entry.name)] = (int(fields["VmHWM"].split()[0]), int(fields["VmRSS"].split()[0]))
    mine = {root}
    changed = True
    while changed:
        grown = {pid for pid, parent in parents.items() if parent in mine} - mine
        changed = bool(grown)
        mine |= grown
    return {pid: sizes[pid] for pid in mine if pid in sizes}


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="endstate-disk-fill-") as tmp:
        suite = disk_fill_suite(Path(tmp) / "suite")
        out = Path(tmp) / "out"
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "endstate", "eval", "--suite", str(suite),
                                 "--model", "scripted/reference", "--out", str(out)],
                                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        peaks: dict[int, int] = {}
        together = 0
        while proc.poll() is None:
            sizes = _tree(proc.pid)
            for pid, (hwm, _) in sizes.items():
                peaks[pid] = max(peaks.get(pid, 0), hwm)
            together = max(together, sum(rss for _, rss in sizes.values()))
            time.sleep(0.02)
        output = proc.stdout.read()
        elapsed = time.perf_counter() - started
        cli_mb = max(peaks.get(proc.pid, 0), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
        one_mb = max(peaks.values(), default=0) / 1024
        together_mb = together / 1024
        if proc.returncode != 0:
            sys.exit(f"endstate eval failed:\n{output[-3000:]}")
        [task] = json.loads((out / "results.json").read_text())["tasks"]
    print(f"disk-fill trajectory: {task['outcome']} ({task['stop_reason']}: {task['reason']})")
    print(f"wall time: {elapsed:.1f} s")
    print(f"peak memory: CLI process {cli_mb:.0f} MB; largest single process {one_mb:.0f} MB; "
          f"all harness processes at once {together_mb:.0f} MB over {len(peaks)} processes")
    met = max(one_mb, together_mb) < TARGET_MB
    print(f"target under {TARGET_MB} MB: {'met' if met else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
