"""Where the machine's CPU goes while one command runs: the containers, the engine and
its re-executions, containerd, the command's own process tree, and the rest.

    python bench/cpu_breakdown.py endstate eval --suite tasks --replay cassettes/scripted-reference -j 2
    python bench/cpu_breakdown.py endstate mutate -j 2

On two cores a run is CPU-bound, so its wall follows what it burns. Columns:

- containers: every container's processes (the engine's cgroup parent, which keeps the
  usage of containers already removed);
- dockerd itself, and its children: the engine re-running its own binary to unpack or
  pack an archive (`docker-untar`, `docker-tar`) or to set up a network namespace
  (`set-ipv6`); find out which with `strace -f -e trace=execve -p $(pidof dockerd)`;
- containerd and its children;
- the command's tree: what it and the children it waited for used (workers forked from
  a fork server are not among them: they land in "rest");
- rest: container shims, runc, the kernel, the fork server's workers, anything else.

Figures are one run's; the machine may be shared, so compare two commands run back to
back rather than with numbers from another day.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

#: Where the engine's cgroup parent keeps the usage of every container it made (cgroup v1, v2).
_CONTAINER_USAGE = (
    (Path("/sys/fs/cgroup/cpuacct/docker/cpuacct.usage"), lambda text: int(text) / 1e9),
    (Path("/sys/fs/cgroup/docker/cpu.stat"), lambda text: int(text.split()[1]) / 1e6),  # usage_usec first
)


def busy() -> float:
    """CPU seconds the whole machine has been busy since boot (idle and iowait left out)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / 100  # USER_HZ is 100 on Linux


def containers() -> float | None:
    for path, parse in _CONTAINER_USAGE:
        if path.exists():
            return parse(path.read_text())
    return None


def process(name: str) -> tuple[float, float]:
    """(own, waited-for children's) CPU seconds of the oldest process called `name`."""
    found = subprocess.run(["pgrep", "-o", "-x", name], capture_output=True, text=True).stdout.split()
    if not found:
        return 0.0, 0.0
    fields = Path(f"/proc/{found[0]}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime, cutime, cstime = (int(v) / 100 for v in fields[11:15])
    return utime + stime, cutime + cstime


def main(command: list[str]) -> None:
    if not command:
        sys.exit(__doc__)
    before = busy(), containers(), process("dockerd"), process("containerd")
    started = time.perf_counter()
    code = subprocess.run(command, stdout=subprocess.DEVNULL).returncode
    wall = time.perf_counter() - started
    after = busy(), containers(), process("dockerd"), process("containerd")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = after[0] - before[0]
    tree = usage.ru_utime + usage.ru_stime
    rows = {}
    if before[1] is not None and after[1] is not None:
        rows["containers"] = after[1] - before[1]
    rows["dockerd itself"] = after[2][0] - before[2][0]
    rows["dockerd's children (re-executions)"] = after[2][1] - before[2][1]
    rows["containerd and its children"] = sum(after[3]) - sum(before[3])
    rows["the command's tree"] = tree
    rows["rest"] = total - sum(rows.values())
    print(f"{' '.join(command)}: exit {code}, wall {wall:.1f} s, machine busy {total:.1f} s "
          f"({total / wall:.2f} cores)")
    for name, seconds in rows.items():
        print(f"  {name:<36} {seconds:6.1f} s  {seconds / total:5.0%}")


if __name__ == "__main__":
    main(sys.argv[1:])
