"""A throwaway Ray cluster on this machine: a head and one extra worker node.

Each node is started as a user would start one on a small machine: one CPU (`--num-cpus
1`), an 80 MB object store, and none of the extras a run of endstate does not use: no
dashboard, no usage stats, no log monitor (it tails every worker's log to push it to
drivers, and endstate's drivers do not ask for worker logs).

Both are `ray start --block` processes of our own, stopped by their pid (SIGTERM
makes `ray start --block` stop everything it started); `ray stop` is never used, since
it kills every Ray process of the user, not only ours. Used by the Ray tests and by
bench/ray_overhead.py.

As root (CI), the cluster lives in a network namespace of its own with only a
loopback interface: Ray binds to the machine's own address otherwise (it maps
127.0.0.1 to it), and nothing of a test should listen or connect beyond loopback.
Drivers join it through `wrap(argv)`, which runs a command inside that namespace.

The cluster runs without Ray's token authentication, and while it is up this process
(and the drivers it starts) say so through RAY_AUTH_MODE: a throwaway cluster has no
token to share, and none is written to the user's home.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["LocalRayCluster"]

_RAY = str(Path(sys.executable).with_name("ray"))


class LocalRayCluster:
    def __init__(self, cpus_per_node: int = 1) -> None:
        self.cpus_per_node = cpus_per_node
        self.procs: list[subprocess.Popen] = []
        self.address = ""
        # Short: Ray's unix sockets live under it and their paths are length-limited.
        self.temp_dir = tempfile.mkdtemp(prefix="es-ray-", dir="/tmp")
        self.netns = f"es-ray-{os.getpid()}" if os.geteuid() == 0 and shutil.which("ip") else ""

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` run inside the cluster's network namespace (as is, without one)."""
        return ["ip", "netns", "exec", self.netns, *argv] if self.netns else list(argv)

    def _start(self, *args: str) -> subprocess.Popen:
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
        proc = subprocess.Popen(self.wrap([_RAY, "start", "--block", "--num-cpus", str(self.cpus_per_node),
                                           "--object-store-memory", str(80 * 1024 * 1024), "--disable-usage-stats",
                                           "--include-log-monitor=false", *args]),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                                start_new_session=True)
        self.procs.append(proc)
        return proc

    def __enter__(self) -> LocalRayCluster:
        self.saved_env = {name: os.environ.get(name) for name in ("RAY_AUTH_MODE", "RAY_ADDRESS")}
        os.environ["RAY_AUTH_MODE"] = "disabled"
        os.environ.pop("RAY_ADDRESS", None)
        try:
            if self.netns:
                subprocess.run(["ip", "netns", "add", self.netns], check=True)
                subprocess.run(self.wrap(["ip", "link", "set", "lo", "up"]), check=True)
            head = self._start("--head", "--port", "0", "--include-dashboard=false", "--temp-dir", self.temp_dir)
            log = []
            for line in head.stdout:  # the head prints how to join it, then blocks
                log.append(line)
                found = re.search(r"ray start --address='([^']+)'", line)
                if found:
                    self.address = found.group(1)
                    break
            if not self.address:
                raise RuntimeError("the Ray head did not start:\n" + "".join(log[-30:]))
            self._drain(head)
            self._drain(self._start("--address", self.address))
            self._wait_for_nodes(2)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @staticmethod
    def _drain(proc: subprocess.Popen) -> None:
        """Keep reading what a node prints, so it never blocks on a full pipe."""
        import threading

        threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()

    def _wait_for_nodes(self, count: int, timeout: float = 120) -> None:
        # Asked from a process inside the namespace: this one cannot reach the cluster.
        probe = ("import sys, time, ray\n"
                 f"ray.init(address={self.address!r}, log_to_driver=False, configure_logging=False)\n"
                 f"deadline = time.monotonic() + {timeout}\n"
                 f"while sum(n['Alive'] for n in ray.nodes()) < {count}:\n"
                 "    if time.monotonic() > deadline:\n"
                 "        sys.exit(1)\n"
                 "    time.sleep(0.5)\n"
                 "ray.shutdown()\n")
        done = subprocess.run(self.wrap([sys.executable, "-c", probe]), capture_output=True, text=True,
                              timeout=timeout + 60)
        if done.returncode != 0:
            raise RuntimeError(f"{count} Ray nodes did not come up in {timeout}s:\n{done.stderr[-2000:]}")

    def stop(self) -> None:
        for proc in reversed(self.procs):  # the worker node first, then the head
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)  # its own session: only what it started
                    proc.wait()
        self.procs.clear()
        shutil.rmtree(self.temp_dir, ignore_errors=True)
        from endstate.run._ray_node import sweep_dead_attempts

        sweep_dead_attempts()  # what the slots' processes, stopped with their node, left in /tmp
        if self.netns:
            subprocess.run(["ip", "netns", "delete", self.netns], check=False, capture_output=True)
        for name, value in getattr(self, "saved_env", {}).items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
